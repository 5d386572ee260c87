-- Webhooks for the agent backend: the store's own events, delivered to
-- registered endpoints. A delivery row is written by a trigger in the same
-- transaction as the event it announces (a transactional outbox), so no
-- decision is announced that did not commit and none committed is missed.
-- Each endpoint's dispatcher (a Temporal workflow) posts them in order,
-- signed, and marks each delivered once its receiver said 2xx.
CREATE TABLE webhook_endpoint (
    endpoint_id   text PRIMARY KEY CHECK (endpoint_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    url           text NOT NULL CHECK (url ~ '^https?://'),
    -- The HMAC key; the receiver holds it too (Standard Webhooks' whsec_).
    secret        bytea NOT NULL CHECK (length(secret) >= 24),
    created_at    timestamptz NOT NULL DEFAULT now(),
    delivered_at  timestamptz,
    failing_since timestamptz,
    last_error    text
);

CREATE TABLE webhook_delivery (
    delivery_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id  text NOT NULL REFERENCES webhook_endpoint ON DELETE CASCADE,
    event_type   text NOT NULL,
    payload      jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    attempts     integer NOT NULL DEFAULT 0
);

CREATE INDEX webhook_delivery_due ON webhook_delivery (endpoint_id, delivery_id) WHERE delivered_at IS NULL;

-- Keys the API answered pending_reconciliation: their first decision also
-- goes out as booking.settled, once.
CREATE TABLE webhook_pending (
    request_key text PRIMARY KEY,
    marked_at   timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION webhook_type(kind text, status text, booking_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE kind
        WHEN 'committed' THEN CASE status WHEN 'held' THEN 'booking.held' ELSE 'booking.confirmed' END
        WHEN 'confirmed' THEN 'booking.confirmed'
        WHEN 'cancelled' THEN 'booking.cancelled'
        WHEN 'released_for_reschedule' THEN 'booking.moved'
        WHEN 'expired' THEN CASE WHEN booking_id IS NULL THEN 'intent.expired' ELSE 'hold.expired' END
        WHEN 'conflict' THEN 'booking.refused'
        WHEN 'rejected' THEN 'booking.refused'
    END
$$;

-- A key's decision and its pending mark take the same lock, so whichever
-- commits second sees the other: booking.settled is never lost to a race.
CREATE FUNCTION webhook_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
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
    IF t IN ('booking.confirmed', 'booking.held', 'booking.refused', 'intent.expired') THEN
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

CREATE TRIGGER webhook_enqueue AFTER INSERT ON booking_event
    FOR EACH ROW EXECUTE FUNCTION webhook_enqueue();

-- The API calls this when it answers a key pending_reconciliation. If the
-- key is decided already (the decision beat the answer), booking.settled
-- goes out now, once; otherwise the key waits for its decision.
CREATE FUNCTION webhook_mark_pending(key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    e booking_event;
    t text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoint) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('webhook_pending:' || key));
    SELECT * INTO e FROM booking_event
    WHERE request_key = key AND webhook_type(kind, detail->>'status', booking_id)
        IN ('booking.confirmed', 'booking.held', 'booking.refused', 'intent.expired')
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
