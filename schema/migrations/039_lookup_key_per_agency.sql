-- Caller ID's lookup key (migration 029) becomes each agency's own: the
-- digest of one number differs from agency to agency, so that no
-- agency's digests can be matched against another's, and one agency's
-- key lost, rotated or erased (its row deleted: its contacts' digests
-- then find nothing) touches no other. The default agency keeps the key
-- the store had, so every digest made before reads as before. Another
-- agency's key is made, from Go's crypto/rand, by the first process that
-- seals a contact for it (store.lookupKey), in that agency's own
-- transaction: row-level security holds it to its agency like the data
-- keys beside it. A transaction that names no agency reads the default
-- agency's key, as the expand half of migration 037 reads its tables.

ALTER TABLE vault.lookup_key DROP CONSTRAINT lookup_key_pkey;
ALTER TABLE vault.lookup_key ADD COLUMN agency_no integer NOT NULL DEFAULT coalesce(current_agency(), 1) REFERENCES agency;
ALTER TABLE vault.lookup_key ADD PRIMARY KEY (agency_no);
ALTER TABLE vault.lookup_key ENABLE ROW LEVEL SECURITY;
ALTER TABLE vault.lookup_key FORCE ROW LEVEL SECURITY;
CREATE POLICY agency ON vault.lookup_key USING (agency_no = coalesce((SELECT current_agency()), 1))
    WITH CHECK (agency_no = coalesce((SELECT current_agency()), 1));

-- The API seals contacts, so it may make its agency's key.
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
            -- vault.lookup_key: an agency's first contact makes its key.
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt, agency, vault.lookup_key TO %I', r);
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
