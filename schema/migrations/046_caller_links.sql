-- A caller's own page: the link in each of their texts and e-mails opens
-- it (api/callerpage). The link's token is derived from the data key
-- their contact is sealed under, so every message of the booking and of
-- its moves carries the same link, a try resent carries the one the
-- first try sent, and erasing the contact (which deletes the data key)
-- makes every link to it unmakeable; the store keeps only the token's
-- SHA-256. A link expires with its viewing's end and is revoked by the
-- agency's admin (the next message then carries the next generation's);
-- it goes with the contact's data key, and the rows of links expired a
-- week go with retention.
CREATE TABLE vault.caller_link (
    agency_no   integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    token_hash  bytea NOT NULL CHECK (length(token_hash) = 32),
    request_key text NOT NULL,
    generation  integer NOT NULL CHECK (generation >= 0),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agency_no, token_hash),
    UNIQUE (agency_no, request_key, generation),
    FOREIGN KEY (agency_no, request_key) REFERENCES vault.contact_key (agency_no, request_key) ON DELETE CASCADE
);
ALTER TABLE vault.caller_link ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.caller_link FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.caller_link USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));
CREATE INDEX caller_link_expiry ON vault.caller_link (expires_at);


-- A reply the service does not understand is answered once a day per
-- number (api/texts): when it last was, beside the contact's data key.
ALTER TABLE vault.contact_key ADD COLUMN texts_answered_at timestamptz;

-- The agency as its callers see it: the name their messages are signed
-- with and the number they call back, set by its admin (PUT /v1/profile).
CREATE TABLE agency_profile (
    agency_no      integer PRIMARY KEY DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    name           text NOT NULL CHECK (length(name) <= 240),
    callback_phone text NOT NULL CHECK (callback_phone = '' OR callback_phone ~ '^\+[1-9][0-9]{6,14}$'),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE agency_profile ENABLE ROW LEVEL SECURITY;
ALTER TABLE agency_profile FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON agency_profile USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));

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
            EXECUTE format('GRANT UPDATE (reconfirmed_at) ON booking TO %I', r);
            -- A code's tries and use are counted where it is checked.
            EXECUTE format('GRANT UPDATE (tries, used_at) ON unlock_code TO %I', r);
            -- A caller's page: its admin revokes a link, an erasure
            -- deletes them, and a reply not understood is answered with
            -- one, made or kept (046).
            EXECUTE format('GRANT INSERT, UPDATE, DELETE ON vault.caller_link TO %I', r);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
