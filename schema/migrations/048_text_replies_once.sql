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
            -- agency: a platform key makes and names agencies through the API;
            -- vault.lookup_key: an agency's first contact makes its key (039);
            -- vault.platform_secret: an agency's admin sets its platforms' secrets;
            -- vault.mirror_account: and its mirrors' accounts (042).
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt, agency, vault.lookup_key, vault.platform_secret,
                vault.mirror_account, agency_profile TO %I', r);
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key, vault.platform_secret,
                vault.mirror_account TO %I', r);
            -- A resource's capacity says whether its live occupancy is
            -- exclusive; the booking itself stays the worker's.
            EXECUTE format('GRANT UPDATE (exclusive) ON booking_resource TO %I', r);
            -- A caller's reply to a reminder: they are coming (044).
            EXECUTE format('GRANT UPDATE (reconfirmed_at) ON booking TO %I', r);
            -- A code's tries and use are counted where it is checked.
            EXECUTE format('GRANT UPDATE (tries, used_at) ON unlock_code TO %I', r);
            -- agency_profile: its admin names the agency to its callers;
            -- vault.caller_link: an admin revokes a caller's links, an
            -- erasure deletes them, and a reply not understood is
            -- answered with one, made or kept (046); an erasure takes the
            -- contact a refusal kept for its message (047).
            EXECUTE format('GRANT INSERT, UPDATE, DELETE ON vault.caller_link TO %I', r);
            EXECUTE format('GRANT UPDATE (contact_sealed) ON booking_refusal TO %I', r);
            -- text_reply: the replies taken, once each (048).
            EXECUTE format('GRANT INSERT ON text_reply TO %I', r);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
