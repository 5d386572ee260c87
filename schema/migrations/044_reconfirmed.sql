-- A caller who replies C (or their language's word) to a reminder text
-- confirms they are coming: recorded on their upcoming booking, which the
-- API writes (api/texts) and nothing else of; the operator's view shows
-- it, and the viewing's outcome is counted with it.
ALTER TABLE booking ADD COLUMN reconfirmed_at timestamptz;

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
            -- A caller's reply to a reminder: they are coming (044).
            EXECUTE format('GRANT UPDATE (reconfirmed_at) ON booking TO %I', r);
            -- A code's tries and use are counted where it is checked.
            EXECUTE format('GRANT UPDATE (tries, used_at) ON unlock_code TO %I', r);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
