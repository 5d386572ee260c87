-- A caller told their booking was pending is told how it settled,
-- whatever it settled as. A confirmation goes as every confirmation does;
-- a booking or a move the store refused after the answer (a conflict, a
-- refusal, a choice lapsed) queues a not_booked message, which a refusal
-- otherwise never does. The contact a refusal would not keep is kept for
-- that message alone: the one the pending call sealed (migration 025),
-- on the refusal, erased with the contact's data key and gone with the
-- refusal at retention. The race of the two is closed from both sides:
-- the refusal's event looks for a pending call noted before it, and a
-- pending call noted looks for a refusal decided before it. (The
-- logins' grants: migration 048.)
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
