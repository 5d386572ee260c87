-- A caller told their booking was pending is told how it settled,
-- whatever it settled as. A confirmation goes as every confirmation does;
-- a booking or a move the store refused after the answer (a conflict, a
-- refusal, a choice lapsed) queues a not_booked message, which a refusal
-- otherwise never does. The contact a refusal would not keep is kept for
-- that message alone: the one the pending call sealed (migration 025),
-- on the refusal, erased with the contact's data key and gone with the
-- refusal at retention. The race of the two is closed from both sides:
-- the refusal's event looks for a pending call noted before it, and a
-- pending call noted looks for a refusal decided before it.
ALTER TABLE booking_refusal ADD COLUMN contact_sealed bytea;

ALTER TABLE caller_message DROP CONSTRAINT caller_message_kind_check,
    ADD CONSTRAINT caller_message_kind_check
        CHECK (kind IN ('confirmed', 'rescheduled', 'cancelled', 'reminder', 'code', 'not_booked'));

-- queue_not_booked queues key's not_booked message when the store refused
-- it and a booking call on it was answered pending, keeping the contact
-- that call sealed. A withdrawal is the caller's own cancel: they know.
CREATE FUNCTION queue_not_booked(key text) RETURNS void LANGUAGE sql AS $$
    UPDATE booking_refusal r
    SET contact_sealed = coalesce(r.contact_sealed, decode(p.call->'request'->'Contact'->>'sealed', 'base64'))
    FROM pending_call p
    WHERE r.request_key = key AND p.request_key = key AND p.op IN ('commit', 'hold', 'reschedule')
      AND r.outcome IN ('conflict', 'rejected', 'expired');
    INSERT INTO caller_message (request_key, kind, event_id)
    SELECT key, 'not_booked', e.event_id
    FROM booking_refusal r
    JOIN LATERAL (SELECT event_id FROM booking_event WHERE request_key = key AND booking_id IS NULL ORDER BY event_id LIMIT 1) e ON true
    WHERE r.request_key = key AND r.outcome IN ('conflict', 'rejected', 'expired')
      AND EXISTS (SELECT 1 FROM pending_call p WHERE p.request_key = key AND p.op IN ('commit', 'hold', 'reschedule'))
    ON CONFLICT (agency_no, request_key, kind) WHERE kind <> 'code' DO NOTHING;
$$;

CREATE FUNCTION not_booked_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.booking_id IS NULL AND NEW.kind IN ('conflict', 'rejected', 'expired')
        AND EXISTS (SELECT 1 FROM pending_call WHERE request_key = NEW.request_key) THEN
        PERFORM queue_not_booked(NEW.request_key);
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER not_booked_enqueue AFTER INSERT ON booking_event
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION not_booked_enqueue();

CREATE OR REPLACE FUNCTION note_pending_call(key text, op text, call jsonb, answered_at timestamptz) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT webhook_mark_pending(key);
    INSERT INTO pending_call (request_key, op, call, answered_at) VALUES (key, op, call, answered_at)
    ON CONFLICT DO NOTHING;
    SELECT queue_not_booked(key);
$$;

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
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
