-- The API's role reads what its routes answer and writes only what they
-- change: the catalogue (resources, policy, pools), contacts' data keys
-- and erasures, webhook endpoints and their keys (written, never read
-- back), hand-offs and find_booking's attempts. It inserts no event and
-- no delivery, updates no booking and reads no webhook key. The few
-- writes its routes cause beyond that (booking.settled for a key answered
-- pending, handoff.requested, the event of an erasure) go through the
-- functions below, which run as the schema's owner and each check that
-- what they record is so: a caller can make them record nothing else.

ALTER FUNCTION webhook_mark_pending(text) SECURITY DEFINER SET search_path = public, pg_temp;

-- A new hand-off goes out to every receiver once, without the caller's words.
CREATE FUNCTION webhook_handoff_requested(id bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
    SELECT e.endpoint_id, 'handoff.requested', jsonb_build_object('handoff_id', h.handoff_id, 'conversation_id', h.conversation_id,
        'topic', h.topic, 'request_keys', h.request_keys, 'occurred_at', h.requested_at)
    FROM handoff h CROSS JOIN webhook_endpoint e
    WHERE h.handoff_id = id AND h.resolved_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM webhook_delivery d
                      WHERE d.event_type = 'handoff.requested' AND (d.payload->>'handoff_id')::bigint = id)
$$;

-- An erasure is recorded against the booking, with its reason and no
-- data, once the key's tombstone stands and only once.
CREATE FUNCTION record_contact_erased(key text, reason text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO booking_event (request_key, booking_id, kind, detail)
    SELECT key, (SELECT booking_id FROM booking WHERE request_key = key), 'contact_erased', jsonb_build_object('reason', reason)
    WHERE EXISTS (SELECT 1 FROM vault.contact_key WHERE request_key = key AND erased_at IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM booking_event WHERE request_key = key AND kind = 'contact_erased')
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
            EXECUTE format('GRANT INSERT, UPDATE ON resource, policy, agent_pool, vault.contact_key, webhook_endpoint,
                vault.webhook_key, handoff, vault.handoff_key, find_attempt TO %I', r);
            EXECUTE format('GRANT DELETE ON booking_contact, webhook_endpoint, vault.webhook_key TO %I', r);
            -- A resource's capacity says whether its live occupancy is
            -- exclusive; the booking itself stays the worker's.
            EXECUTE format('GRANT UPDATE (exclusive) ON booking_resource TO %I', r);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, vault TO %I', r);
        END IF;
    END LOOP;
END;
$$;
