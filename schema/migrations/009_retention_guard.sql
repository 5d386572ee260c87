-- The event log's guard, tightened and widened at once: outside retention
-- no row may change at all, and retention (store.ApplyRetention), which
-- says so for its own transaction with SET LOCAL bookingsaga.retention,
-- may rename keys wherever they stand -- in a row's key and in the details
-- of a rescheduled pair that name each other -- and delete what is past
-- the log's period.
CREATE OR REPLACE FUNCTION booking_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('bookingsaga.retention', true) = 'on' THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'booking_event is append-only';
END;
$$;

-- Retention renames the keys a reschedule pair names each other by.
CREATE INDEX booking_replaces ON booking (replaces_request_key) WHERE replaces_request_key IS NOT NULL;
CREATE INDEX booking_replaced_by ON booking (replaced_by_request_key) WHERE replaced_by_request_key IS NOT NULL;
