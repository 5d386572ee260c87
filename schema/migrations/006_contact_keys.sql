-- Erasure that really erases. Each booking's contact is sealed (AES-256-GCM)
-- under a data key of its own before it leaves the API, so every copy of it
-- -- the saga's history in Temporal, the booking_contact row, a backup of
-- either -- is ciphertext. Erasing a contact, on request or at its
-- retention deadline, deletes its data key, and every copy becomes
-- unreadable at once.
--
-- The keys live in a schema of their own so that long-lived backups can
-- leave them out (pg_dump --exclude-schema=vault): a backup that holds a
-- key would keep its contact readable after the erasure. Restoring such a
-- backup loses the contacts, which are short-lived by design.
CREATE SCHEMA vault;

CREATE TABLE vault.contact_key (
    request_key text PRIMARY KEY CHECK (length(request_key) BETWEEN 1 AND 255),
    -- NULL once erased: the row stays as a tombstone, so that a request
    -- resent after the erasure cannot bring the contact back.
    data_key    bytea CHECK (data_key IS NULL OR length(data_key) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    erased_at   timestamptz,
    CHECK ((data_key IS NULL) = (erased_at IS NOT NULL))
);

-- Rows written from this release on hold the sealed contact only; the
-- plain columns stay for rows that workers of the release before write
-- during a rolling deploy, which retention and erasure delete like others.
ALTER TABLE booking_contact ADD COLUMN sealed bytea;
