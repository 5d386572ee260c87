-- A decision queues its caller's message only when there is a caller to
-- write to: a contact stored with the booking, or with a booking it
-- replaced (a move writes to its caller's). A booking made without one
-- would only be marked not_consented; its row cost every commit a write
-- (BENCHMARKS.md). The trigger runs at commit, deferred, so that it sees
-- the contact the commit's own transaction stores after the event.
DROP TRIGGER caller_message_enqueue ON booking_event;

CREATE OR REPLACE FUNCTION caller_message_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text := caller_message_kind(NEW.kind, NEW.detail->>'status', NEW.detail->'intent'->>'replaces');
BEGIN
    IF k IS NOT NULL AND NEW.booking_id IS NOT NULL AND (
        EXISTS (SELECT 1 FROM booking_contact c WHERE c.booking_id = NEW.booking_id)
        OR EXISTS (SELECT 1 FROM booking b WHERE b.booking_id = NEW.booking_id AND b.replaces_request_key IS NOT NULL)) THEN
        INSERT INTO caller_message (request_key, kind, event_id) VALUES (NEW.request_key, k, NEW.event_id)
        ON CONFLICT (request_key, kind) DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER caller_message_enqueue AFTER INSERT ON booking_event
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION caller_message_enqueue();
