-- A platform key makes and names agencies through the API (PUT
-- /v1/agencies/{id}), so the API's login may write the agency table; it
-- still reads every other agency's data through row-level security only.
-- The agency table itself is no agency's data: every login reads it whole.

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
            -- agency: a platform key makes and names agencies through the API.
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt, agency TO %I', r);
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
