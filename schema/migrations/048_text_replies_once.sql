-- The callers' replies taken, by Twilio's MessageSid: a reply posted
-- again (Twilio's retry, or someone replaying a signed request: the
-- signature carries no time) acts once, so a START replayed after a later
-- STOP starts nothing. Kept as long as a contact is.
CREATE TABLE text_reply (
    agency_no   integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    message_sid text NOT NULL CHECK (length(message_sid) BETWEEN 2 AND 64),
    received_at timestamptz NOT NULL,
    PRIMARY KEY (agency_no, message_sid)
);
ALTER TABLE text_reply ENABLE ROW LEVEL SECURITY;
ALTER TABLE text_reply FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON text_reply USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));
CREATE INDEX text_reply_received ON text_reply (received_at);

-- What the API's login may write, one row per grant, with why: a later
-- migration adds a row, and the function that applies them is not copied
-- again (it was, migration after migration, up to 047).
CREATE TABLE api_grant (
    privileges text NOT NULL,
    objects    text NOT NULL,
    why        text NOT NULL,
    PRIMARY KEY (privileges, objects)
);
INSERT INTO api_grant (privileges, objects, why) VALUES
    ('SELECT (endpoint_id)', 'vault.webhook_key', 'an upsert''s conflict target is read; the key is not'),
    ('INSERT, UPDATE', 'resource, policy, agent_pool, vault.contact_key, webhook_endpoint, vault.webhook_key, handoff, '
        'vault.handoff_key, find_attempt, agency, vault.lookup_key, vault.platform_secret, vault.mirror_account, agency_profile',
        'the admin routes write the catalogue, webhooks, secrets, mirror accounts (042) and the profile (046); a platform '
        'key makes agencies; a call seals contacts, hand-offs and find attempts; an agency''s first contact makes its key (039)'),
    ('DELETE', 'booking_contact, webhook_endpoint, vault.webhook_key, vault.platform_secret, vault.mirror_account',
        'erasures, and what the admin routes delete'),
    ('UPDATE (exclusive)', 'booking_resource',
        'a resource''s capacity says whether its live occupancy is exclusive; the booking itself stays the worker''s'),
    ('UPDATE (reconfirmed_at)', 'booking', 'a caller''s reply to a reminder: they are coming (044)'),
    ('UPDATE (tries, used_at)', 'unlock_code', 'a code''s tries and use are counted where it is checked'),
    ('INSERT, UPDATE, DELETE', 'vault.caller_link',
        'an admin revokes a caller''s links, an erasure deletes them, a reply not understood is answered with one (046)'),
    ('UPDATE (contact_sealed)', 'booking_refusal', 'an erasure takes the contact a refusal kept for its message (047)'),
    ('INSERT', 'text_reply', 'the replies taken, once each (048)');

CREATE OR REPLACE FUNCTION bookingsaga_grant_roles() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r text;
    g record;
BEGIN
    FOREACH r IN ARRAY ARRAY['bookingsaga_worker', 'bookingsaga_api', 'bookingsaga_retention'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r);
        EXECUTE format('GRANT USAGE ON SCHEMA public, vault TO %I', r);
        EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public, vault TO %I', r);
        IF r = 'bookingsaga_api' THEN
            -- The API reads what it serves, never a webhook's signing key,
            -- and writes what api_grant lists.
            EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA public, vault FROM %I', r);
            EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public, vault TO %I', r);
            EXECUTE format('REVOKE SELECT ON vault.webhook_key FROM %I', r);
            FOR g IN SELECT privileges, objects FROM api_grant ORDER BY privileges, objects LOOP
                EXECUTE format('GRANT %s ON %s TO %I', g.privileges, g.objects, r);
            END LOOP;
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
