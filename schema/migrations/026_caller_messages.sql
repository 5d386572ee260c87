-- The caller's messages: an outbox row per booking and kind, written by
-- the decision's own transaction (a trigger on the event log, as the
-- webhooks' are), so that no decision goes unmessaged and none is
-- messaged twice: a re-sent book, a replayed commit, a restored booking
-- add nothing. Every booking decision is queued; the sender opens the
-- sealed contact and sends only on the channel the caller agreed to
-- (status not_consented otherwise). No personal data rests here: the
-- text is built from the sealed contact when it is sent.
CREATE TABLE caller_message (
    message_id  bigserial PRIMARY KEY,
    request_key text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('confirmed', 'rescheduled', 'cancelled')),
    event_id    bigint NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    status      text NOT NULL DEFAULT 'due'
        CHECK (status IN ('due', 'sent', 'not_consented', 'undeliverable', 'stale')),
    channel     text CHECK (channel IN ('sms')),
    provider_id text,
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text,
    sent_at     timestamptz,
    -- not_before holds a message out of quiet hours in the property's zone.
    not_before  timestamptz,
    UNIQUE (request_key, kind)
);
CREATE INDEX caller_message_due ON caller_message (message_id) WHERE status = 'due';

CREATE FUNCTION caller_message_kind(kind text, status text, replaces text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN kind = 'committed' AND status = 'confirmed' AND replaces IS NOT NULL THEN 'rescheduled'
        WHEN kind = 'committed' AND status = 'confirmed' THEN 'confirmed'
        WHEN kind = 'confirmed' THEN 'confirmed'
        WHEN kind = 'cancelled' THEN 'cancelled'
    END
$$;

CREATE FUNCTION caller_message_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text := caller_message_kind(NEW.kind, NEW.detail->>'status', NEW.detail->'intent'->>'replaces');
BEGIN
    IF k IS NOT NULL AND NEW.booking_id IS NOT NULL THEN
        INSERT INTO caller_message (request_key, kind, event_id) VALUES (NEW.request_key, k, NEW.event_id)
        ON CONFLICT (request_key, kind) DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER caller_message_enqueue AFTER INSERT ON booking_event
    FOR EACH ROW EXECUTE FUNCTION caller_message_enqueue();
