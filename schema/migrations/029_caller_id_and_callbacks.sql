-- Caller ID: a returning caller who lost their reference is found by the
-- number the voice platform says they call from, with the name they
-- booked under. The number can't be looked up in a sealed contact, so
-- each contact with a phone keeps beside its data key a keyed digest of
-- the number in E.164: HMAC-SHA256 under vault.lookup_key, a secret made
-- once per store. Without that key a dump of the digests can't be read
-- back by trying every number (there are few enough to try them all with
-- a plain hash). The digest goes with the data key: erased with the
-- contact, by whichever path erases it (the trigger below).
CREATE TABLE vault.lookup_key (
    id  boolean PRIMARY KEY DEFAULT true CHECK (id),
    key bytea NOT NULL CHECK (length(key) = 32)
);
-- Made here, once, from the server's strong random source (two v4 UUIDs:
-- 244 random bits), so that no process needs to write it. A store
-- restored without the vault schema has none: its contacts are gone too,
-- and caller ID finds nothing until a key is made again.
INSERT INTO vault.lookup_key (key)
SELECT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

ALTER TABLE vault.contact_key ADD COLUMN phone_digest bytea CHECK (phone_digest IS NULL OR length(phone_digest) = 32);
ALTER TABLE vault.contact_key ADD CHECK (data_key IS NOT NULL OR phone_digest IS NULL);
CREATE INDEX contact_key_phone ON vault.contact_key (phone_digest) WHERE phone_digest IS NOT NULL;

CREATE FUNCTION contact_key_forget_phone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.data_key IS NULL THEN
        NEW.phone_digest := NULL;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER contact_key_forget_phone BEFORE INSERT OR UPDATE ON vault.contact_key
    FOR EACH ROW EXECUTE FUNCTION contact_key_forget_phone();

-- A hand-off a person can act on: the number to call back and the window
-- the caller prefers, sealed with the reason under the hand-off's data
-- key (one box, so one erasure deletes both).
ALTER TABLE handoff ADD COLUMN callback_sealed bytea;

-- handoff.requested says whether there is a number to call, never the number.
CREATE OR REPLACE FUNCTION webhook_handoff_requested(id bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
    SELECT e.endpoint_id, 'handoff.requested', jsonb_build_object('handoff_id', h.handoff_id, 'conversation_id', h.conversation_id,
        'topic', h.topic, 'request_keys', h.request_keys, 'occurred_at', h.requested_at,
        'has_callback_number', h.callback_sealed IS NOT NULL)
    FROM handoff h CROSS JOIN webhook_endpoint e
    WHERE h.handoff_id = id AND h.resolved_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM webhook_delivery d
                      WHERE d.event_type = 'handoff.requested' AND (d.payload->>'handoff_id')::bigint = id)
$$;
