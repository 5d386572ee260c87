-- Each agency's voice platforms sign their calls with secrets of its own
-- (its Retell account's API key, its Vapi credential): an agency's admin
-- key sets them (PUT /v1/voice/secrets/{platform}), and the API checks a
-- call to that agency's tool URLs (/v1/agencies/{agency}/tools/...)
-- against them. Row-level security holds each to its agency; the API
-- reads them to check signatures and writes them for the admin, and
-- never answers one back. A transaction that names no agency reads the
-- default agency's, as migration 039's key.

CREATE TABLE vault.platform_secret (
    agency_no  integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    platform   text NOT NULL CHECK (platform IN ('retell', 'vapi', 'vapi_hmac')),
    secret     text NOT NULL CHECK (length(secret) BETWEEN 16 AND 512),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agency_no, platform)
);
ALTER TABLE vault.platform_secret ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.platform_secret FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.platform_secret USING (agency_no = coalesce((SELECT current_agency()), 1))
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
            -- vault.platform_secret: an agency's admin sets its platforms' secrets.
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt, agency, vault.lookup_key, vault.platform_secret TO %I', r);
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key, vault.platform_secret TO %I', r);
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
