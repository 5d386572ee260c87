-- A caller may cancel a booking whose call was answered
-- pending_reconciliation before anything decided it (Temporal never got
-- the call, and only reconciliation's resend would ever book it). The
-- cancel is then the store's decision on the key: a refusal with outcome
-- 'withdrawn', recorded under the commit's locks like a lapsed intent, so
-- that the resend, or the caller's own retry with the key, finds the key
-- decided and books nothing.
ALTER TABLE booking_refusal DROP CONSTRAINT booking_refusal_outcome_check,
    ADD CONSTRAINT booking_refusal_outcome_check CHECK (outcome IN ('conflict', 'rejected', 'expired', 'withdrawn'));

-- A reference the caller quotes for a call still pending resolves to its
-- key, as a decided one's does.
CREATE INDEX pending_call_reference ON pending_call (request_reference(request_key));

-- A withdrawal goes out as booking.cancelled (with no booking_id: nothing
-- was ever booked), and settles a key answered pending like any first
-- decision.
CREATE OR REPLACE FUNCTION webhook_type(kind text, status text, booking_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE kind
        WHEN 'committed' THEN CASE status WHEN 'held' THEN 'booking.held' ELSE 'booking.confirmed' END
        WHEN 'confirmed' THEN 'booking.confirmed'
        WHEN 'cancelled' THEN 'booking.cancelled'
        WHEN 'withdrawn' THEN 'booking.cancelled'
        WHEN 'released_for_reschedule' THEN 'booking.moved'
        WHEN 'expired' THEN CASE WHEN booking_id IS NULL THEN 'intent.expired' ELSE 'hold.expired' END
        WHEN 'conflict' THEN 'booking.refused'
        WHEN 'rejected' THEN 'booking.refused'
        WHEN 'time_changed' THEN 'booking.time_changed'
        WHEN 'outcome' THEN 'booking.outcome'
    END
$$;

-- Whether an event is a key's first decision, the one booking.settled
-- announces.
CREATE FUNCTION webhook_settles(kind text, status text, booking_id uuid) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT kind = 'withdrawn' OR webhook_type(kind, status, booking_id)
        IN ('booking.confirmed', 'booking.held', 'booking.refused', 'intent.expired')
$$;

CREATE OR REPLACE FUNCTION webhook_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    t text := webhook_type(NEW.kind, NEW.detail->>'status', NEW.booking_id);
BEGIN
    IF t IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_endpoint) THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
    SELECT endpoint_id, t, jsonb_build_object('request_key', NEW.request_key, 'booking_id', NEW.booking_id,
        'occurred_at', NEW.occurred_at, 'detail', NEW.detail)
    FROM webhook_endpoint;
    IF webhook_settles(NEW.kind, NEW.detail->>'status', NEW.booking_id) THEN
        PERFORM pg_advisory_xact_lock(hashtext('webhook_pending:' || NEW.request_key));
        DELETE FROM webhook_pending WHERE request_key = NEW.request_key;
        IF FOUND THEN
            INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
            SELECT endpoint_id, 'booking.settled', jsonb_build_object('request_key', NEW.request_key,
                'booking_id', NEW.booking_id, 'occurred_at', NEW.occurred_at, 'outcome', t, 'detail', NEW.detail)
            FROM webhook_endpoint;
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

-- (Still the API's, as migration 023 made it: replacing it keeps no attribute.)
CREATE OR REPLACE FUNCTION webhook_mark_pending(key text) RETURNS void LANGUAGE plpgsql
SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    e booking_event;
    t text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoint) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('webhook_pending:' || key));
    SELECT * INTO e FROM booking_event
    WHERE request_key = key AND webhook_settles(kind, detail->>'status', booking_id)
    ORDER BY event_id LIMIT 1;
    IF NOT FOUND THEN
        INSERT INTO webhook_pending (request_key) VALUES (key) ON CONFLICT DO NOTHING;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM webhook_delivery WHERE event_type = 'booking.settled' AND payload->>'request_key' = key) THEN
        RETURN;
    END IF;
    t := webhook_type(e.kind, e.detail->>'status', e.booking_id);
    INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
    SELECT endpoint_id, 'booking.settled', jsonb_build_object('request_key', key, 'booking_id', e.booking_id,
        'occurred_at', e.occurred_at, 'outcome', t, 'detail', e.detail)
    FROM webhook_endpoint;
END;
$$;
