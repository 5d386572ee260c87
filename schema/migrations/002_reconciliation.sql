-- Drift a reconciliation run found and could not repair by itself: today,
-- an event someone put straight into a resource's calendar over a confirmed
-- booking. A human decides; the flag records what was found and, later,
-- how it was resolved. One flag per (booking, calendar, event): a second
-- run finding the same thing changes nothing.
CREATE TABLE drift_flag (
    flag_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_key     text NOT NULL,
    booking_id      uuid NOT NULL REFERENCES booking,
    kind            text NOT NULL CHECK (kind IN ('foreign_calendar_event')),
    calendar_id     text NOT NULL,
    event_id        text NOT NULL,
    detail          jsonb NOT NULL DEFAULT '{}',
    found_at        timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    resolution_note text,
    UNIQUE (request_key, kind, calendar_id, event_id)
);

CREATE INDEX drift_flag_open ON drift_flag (found_at) WHERE resolved_at IS NULL;

-- Reconciliation walks bookings by start time within a window.
CREATE INDEX booking_starts_at ON booking (starts_at, request_key);

-- Retention purges contact details by deadline.
CREATE INDEX booking_contact_retain_until ON booking_contact (retain_until);
