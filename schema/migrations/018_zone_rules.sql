-- What a booking promised, and with which zone rules. A caller is told a
-- local time; the store keeps an instant. Both hold only under the release
-- of the IANA rules that turned one into the other, and releases change
-- offsets (British Columbia's year-round UTC−7 from November 2026). So a
-- booking records the local start it promised, in its time_zone, and the
-- release used (zone_rules); zone_rules_checked is the last release a
-- worker checked it under, so a second pass changes nothing. Bookings
-- from before this migration promised nothing on record and are left as
-- they are.
ALTER TABLE booking
    ADD COLUMN local_start        text CHECK (local_start ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$'),
    ADD COLUMN zone_rules         text,
    ADD COLUMN zone_rules_checked text;

-- A booking whose promised local time no longer maps to its instant and
-- could not follow (taken, closed, or a DST gap or overlap now) is flagged
-- for a human, once per release.
ALTER TABLE drift_flag DROP CONSTRAINT drift_flag_kind_check;
ALTER TABLE drift_flag ADD CONSTRAINT drift_flag_kind_check
    CHECK (kind IN ('foreign_calendar_event', 'store_lost_booking', 'unknown_calendar_event', 'store_lost_change',
                    'zone_rules_changed'));

-- A booking that followed a rule change tells the agent backend.
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
    END
$$;
