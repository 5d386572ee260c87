-- A one-time code. Caller ID proves nothing (a carrier passes on what a
-- caller sends), so a caller found by it alone may change a booking only
-- after reading back a code texted to the number that booking was made
-- with: possession of that phone. The code is never stored: the store
-- derives it from the row's nonce under its lookup key when it is sent
-- and when it is checked. A code lives minutes, takes a few tries, and is
-- used once; the rows go a day after they expire.
CREATE TABLE unlock_code (
    unlock_id    bigserial PRIMARY KEY,
    conversation text NOT NULL,
    request_key  text NOT NULL,
    nonce        bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    tries        integer NOT NULL DEFAULT 0,
    used_at      timestamptz
);
CREATE INDEX unlock_code_conversation ON unlock_code (conversation, unlock_id DESC);
CREATE INDEX unlock_code_expiry ON unlock_code (expires_at);

-- The code's text goes through the callers' outbox, which the worker
-- sends (the API holds no SMS credentials): one row per code, so the
-- one-per-booking-and-kind rule now spares kind 'code'.
ALTER TABLE caller_message ADD COLUMN unlock_id bigint REFERENCES unlock_code ON DELETE CASCADE;
ALTER TABLE caller_message DROP CONSTRAINT caller_message_kind_check,
    ADD CONSTRAINT caller_message_kind_check CHECK (kind IN ('confirmed', 'rescheduled', 'cancelled', 'reminder', 'code')),
    ADD CONSTRAINT caller_message_code_check CHECK ((kind = 'code') = (unlock_id IS NOT NULL));
ALTER TABLE caller_message DROP CONSTRAINT caller_message_request_key_kind_key;
CREATE UNIQUE INDEX caller_message_once ON caller_message (request_key, kind) WHERE kind <> 'code';

-- Texts are bounded (SMS pumping): a message over a cap on one number,
-- or to a country the agency does not text, ends 'refused'.
ALTER TABLE caller_message DROP CONSTRAINT caller_message_status_check,
    ADD CONSTRAINT caller_message_status_check
        CHECK (status IN ('due', 'sent', 'not_consented', 'undeliverable', 'stale', 'refused'));
-- to_digest is the keyed digest of the number a text went to (as
-- vault.contact_key.phone_digest), by which a number's texts of the day
-- are counted without holding it; erasing the contact erases it too.
-- by_key names the API key whose call asked for the text (a booking's,
-- or a code's), by which a key's texts of the hour are counted.
ALTER TABLE caller_message ADD COLUMN to_digest bytea, ADD COLUMN by_key text;
CREATE INDEX caller_message_to_digest ON caller_message (to_digest, created_at) WHERE to_digest IS NOT NULL;
CREATE INDEX caller_message_by_key ON caller_message (by_key, created_at) WHERE by_key IS NOT NULL;

CREATE OR REPLACE FUNCTION caller_message_forget_errors() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    UPDATE caller_message SET last_error = NULL, to_digest = NULL
    WHERE request_key = NEW.request_key AND (last_error IS NOT NULL OR to_digest IS NOT NULL);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION caller_message_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text := caller_message_kind(NEW.kind, NEW.detail->>'status', NEW.detail->'intent'->>'replaces');
BEGIN
    IF k IS NOT NULL AND NEW.booking_id IS NOT NULL AND (
        EXISTS (SELECT 1 FROM booking_contact c WHERE c.booking_id = NEW.booking_id)
        OR EXISTS (SELECT 1 FROM booking b WHERE b.booking_id = NEW.booking_id AND b.replaces_request_key IS NOT NULL)) THEN
        INSERT INTO caller_message (request_key, kind, event_id) VALUES (NEW.request_key, k, NEW.event_id)
        ON CONFLICT (request_key, kind) WHERE kind <> 'code' DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

-- The API issues a code and queues its text in one step, and may do
-- nothing else to the outbox.
CREATE FUNCTION issue_unlock_code(conv text, key text, code_nonce bytea, at timestamptz, ttl interval) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    WITH code AS (
        INSERT INTO unlock_code (conversation, request_key, nonce, created_at, expires_at)
        VALUES (conv, key, code_nonce, at, at + ttl) RETURNING unlock_id, request_key
    ), msg AS (
        INSERT INTO caller_message (request_key, kind, event_id, unlock_id, created_at)
        SELECT request_key, 'code', 0, unlock_id, at FROM code
    )
    SELECT unlock_id FROM code
$$;

CREATE OR REPLACE FUNCTION bookingsaga_grant_roles() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['bookingsaga_worker', 'bookingsaga_api', 'bookingsaga_retention'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r);
        EXECUTE format('GRANT USAGE ON SCHEMA public, vault TO %I', r);
        EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public, vault TO %I', r);
        IF r = 'bookingsaga_api' THEN
            EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA public, vault FROM %I', r);
            EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public, vault TO %I', r);
            EXECUTE format('REVOKE SELECT ON vault.webhook_key FROM %I', r);
            -- An upsert's conflict target is read; the key is not.
            EXECUTE format('GRANT SELECT (endpoint_id) ON vault.webhook_key TO %I', r);
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt TO %I', r);
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key TO %I', r);
            -- A resource's capacity says whether its live occupancy is
            -- exclusive; the booking itself stays the worker's.
            EXECUTE format('GRANT UPDATE (exclusive) ON booking_resource TO %I', r);
            -- A code's tries and use are counted where it is checked.
            EXECUTE format('GRANT UPDATE (tries, used_at) ON unlock_code TO %I', r);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
