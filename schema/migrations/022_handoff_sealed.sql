-- A hand-off's reason is the caller's own words, as personal as a
-- contact: it rests sealed under a data key of the hand-off's own
-- (vault.handoff_key), and erasing the contact of a booking the hand-off
-- names deletes that key, so every copy of the words, backups included,
-- becomes unreadable at once. reason holds plain text only for hand-offs
-- recorded before this migration (a new reason for one seals it); they go
-- with the contacts' retention as before.
CREATE TABLE vault.handoff_key (
    handoff_id bigint PRIMARY KEY REFERENCES handoff ON DELETE CASCADE,
    data_key   bytea,
    erased_at  timestamptz,
    CHECK ((data_key IS NULL) = (erased_at IS NOT NULL))
);

ALTER TABLE handoff ALTER COLUMN reason DROP NOT NULL;
ALTER TABLE handoff ADD COLUMN reason_sealed bytea;
ALTER TABLE handoff ADD CHECK (reason IS NULL OR reason_sealed IS NULL);
