-- A caller who texts STOP (or another of Twilio's opt-out words) is sent
-- no more texts by the agency, until they text START: the stop is kept
-- beside the contact's data key, on every contact of the agency with
-- that number (by its phone digest, migration 029), and erased with it,
-- by the trigger that forgets the digest. A later booking from the same
-- number is stopped while any stopped contact of that number stands.
ALTER TABLE vault.contact_key ADD COLUMN texts_stopped_at timestamptz;
ALTER TABLE vault.contact_key ADD CHECK (texts_stopped_at IS NULL OR phone_digest IS NOT NULL);

CREATE OR REPLACE FUNCTION contact_key_forget_phone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.data_key IS NULL THEN
        NEW.phone_digest := NULL;
        NEW.texts_stopped_at := NULL;
    END IF;
    RETURN NEW;
END;
$$;
