-- One role no longer has to own and do everything. A deployment can give
-- the worker, the agent API and the retention job logins of their own
-- (deploy/postgres-init.sh makes them): bookingsaga_worker and
-- bookingsaga_api read and write rows but own nothing, so they can neither
-- change the schema nor switch a trigger off; bookingsaga_api deletes
-- nothing but contacts and webhook endpoints; and only
-- bookingsaga_retention (or the schema's owner, who could drop the
-- trigger anyway) can relax the event log's guard. Before, any session
-- could, with SET LOCAL bookingsaga.retention.

-- May this session rewrite the event log? Only as, or as a member of,
-- bookingsaga_retention, or the log's owner (a single-role deployment).
CREATE FUNCTION bookingsaga_may_rewrite() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'bookingsaga_retention')
                THEN pg_has_role(current_user, 'bookingsaga_retention', 'MEMBER') ELSE false END
        OR pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'booking_event'::regclass), 'MEMBER')
$$;

CREATE OR REPLACE FUNCTION booking_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('bookingsaga.retention', true) = 'on' AND bookingsaga_may_rewrite() THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'booking_event is append-only';
END;
$$;

-- Grants each of the three roles that exists what it needs, on every
-- table there is now; schema.Migrate runs it after every migration, so a
-- table a later one adds is covered too.
CREATE FUNCTION bookingsaga_grant_roles() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['bookingsaga_worker', 'bookingsaga_api', 'bookingsaga_retention'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r);
        EXECUTE format('GRANT USAGE ON SCHEMA public, vault TO %I', r);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public, vault TO %I', r);
        IF r = 'bookingsaga_api' THEN
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key TO %I', r);
        ELSE
            EXECUTE format('GRANT DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
