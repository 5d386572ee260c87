-- What a store restored from a backup (or a lagging replica promoted) may
-- have lost: a booking a saga confirmed that the store no longer holds,
-- and an event of ours in a calendar whose key the store does not know.
-- Both are flagged for a human and nothing is deleted on that ground: the
-- store stays the truth, but its loss is never silent. Neither has a
-- booking row to point to.
ALTER TABLE drift_flag ALTER COLUMN booking_id DROP NOT NULL;
ALTER TABLE drift_flag DROP CONSTRAINT drift_flag_kind_check;
ALTER TABLE drift_flag ADD CONSTRAINT drift_flag_kind_check
    CHECK (kind IN ('foreign_calendar_event', 'store_lost_booking', 'unknown_calendar_event'));
