-- How a viewing went, as the agency's staff record it: attended, no_show
-- or cancelled_by_agency. It is the booking's (a correction replaces it)
-- and each recording is an event, which the webhooks send as
-- booking.outcome with whether the caller had been sent a reminder.
ALTER TABLE booking
    ADD COLUMN outcome text CHECK (outcome IN ('attended', 'no_show', 'cancelled_by_agency')),
    ADD COLUMN outcome_at timestamptz,
    ADD CHECK ((outcome IS NULL) = (outcome_at IS NULL));

CREATE OR REPLACE FUNCTION webhook_type(kind text, status text, booking_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE kind
        WHEN 'committed' THEN CASE status WHEN 'held' THEN 'booking.held' ELSE 'booking.confirmed' END
        WHEN 'confirmed' THEN 'booking.confirmed'
        WHEN 'cancelled' THEN 'booking.cancelled'
        WHEN 'released_for_reschedule' THEN 'booking.moved'
        WHEN 'expired' THEN CASE WHEN booking_id IS NULL THEN 'intent.expired' ELSE 'hold.expired' END
        WHEN 'conflict' THEN 'booking.refused'
        WHEN 'rejected' THEN 'booking.refused'
        WHEN 'time_changed' THEN 'booking.time_changed'
        WHEN 'outcome' THEN 'booking.outcome'
    END
$$;
