-- A restore can lose a cancellation or a move as well as a booking: the
-- store then holds live a booking whose saga answered cancelled or
-- rescheduled. Reconciliation flags it for a human (ops restore applies
-- the change again), as it does a lost booking.
ALTER TABLE drift_flag DROP CONSTRAINT drift_flag_kind_check;
ALTER TABLE drift_flag ADD CONSTRAINT drift_flag_kind_check
    CHECK (kind IN ('foreign_calendar_event', 'store_lost_booking', 'unknown_calendar_event', 'store_lost_change'));
