-- Reminders and e-mail. A policy says how long before the viewing a
-- caller is reminded (a day unless it says otherwise, 0 for none); the
-- store works out each booking's remind_at when it is confirmed, from
-- the policy it was confirmed under, and moves it with the booking when
-- the zone rules do. The saga sleeps until then and asks for the reminder
-- (booking_event 'reminder_due'), which queues it as any other message.
ALTER TABLE policy ADD COLUMN reminder_minutes integer NOT NULL DEFAULT 1440
    CHECK (reminder_minutes BETWEEN 0 AND 10080);
ALTER TABLE booking ADD COLUMN remind_at timestamptz;

-- A booking confirmed inside its reminder window gets none: the caller
-- has just been told.
CREATE FUNCTION booking_remind_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.remind_at := (
        SELECT at FROM (SELECT NEW.starts_at - make_interval(mins => p.reminder_minutes) AS at
                        FROM policy p WHERE p.version = NEW.policy_version AND p.reminder_minutes > 0) r
        WHERE NEW.committed_at IS NOT NULL AND r.at > NEW.committed_at);
    RETURN NEW;
END;
$$;

CREATE TRIGGER booking_remind_at BEFORE INSERT OR UPDATE OF starts_at, committed_at ON booking
    FOR EACH ROW EXECUTE FUNCTION booking_remind_at();

UPDATE booking SET committed_at = committed_at WHERE status = 'confirmed' AND starts_at > now();

ALTER TABLE caller_message DROP CONSTRAINT caller_message_kind_check,
    ADD CONSTRAINT caller_message_kind_check CHECK (kind IN ('confirmed', 'rescheduled', 'cancelled', 'reminder'));
ALTER TABLE caller_message DROP CONSTRAINT caller_message_channel_check,
    ADD CONSTRAINT caller_message_channel_check CHECK (channel IN ('sms', 'email'));

CREATE OR REPLACE FUNCTION caller_message_kind(kind text, status text, replaces text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN kind = 'committed' AND status = 'confirmed' AND replaces IS NOT NULL THEN 'rescheduled'
        WHEN kind = 'committed' AND status = 'confirmed' THEN 'confirmed'
        WHEN kind = 'confirmed' THEN 'confirmed'
        WHEN kind = 'cancelled' THEN 'cancelled'
        WHEN kind = 'reminder_due' THEN 'reminder'
    END
$$;
