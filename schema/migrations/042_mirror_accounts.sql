-- Each agency's accounts at its mirrors: its Google or Microsoft
-- calendars', its generic CRM's or HubSpot's, its Twilio's and its SMTP
-- server's credentials, one row per kind, set by its admin key (PUT
-- /v1/mirrors/{kind}). The worker writes its bookings through them, the
-- API reads its calendars and CRM through them; neither answers one
-- back. The deployment's own (its flags) serve the default agency only,
-- for the kinds it set none of. Row-level security holds each to its
-- agency; a transaction that names none reads the default agency's.

CREATE TABLE vault.mirror_account (
    agency_no  integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency,
    kind       text NOT NULL CHECK (kind IN ('google', 'microsoft', 'crm', 'hubspot', 'twilio', 'smtp')),
    settings   jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object' AND length(settings::text) <= 16384),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agency_no, kind)
);
ALTER TABLE vault.mirror_account ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.mirror_account FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.mirror_account USING (agency_no = coalesce((SELECT current_agency()), 1))
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
                vault.mirror_account TO %I', r);
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key, vault.platform_secret,
                vault.mirror_account TO %I', r);
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
