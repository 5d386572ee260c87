-- One truth per request_key. A booking row records the decisions that
-- booked something (held, confirmed, and what became of them). This table
-- records every other decision the store made on a key: a conflict or a
-- refusal decided under the commit's locks, or an intent that lapsed
-- before anyone committed it. A later request under the same key replays
-- the row, whatever Temporal still remembers; only a new key gets a new
-- decision.
--
-- Kept for good, like bookings: it holds no personal data (no contact,
-- only the intent's resources and times).
CREATE TABLE booking_refusal (
    request_key        text PRIMARY KEY CHECK (length(request_key) BETWEEN 1 AND 255),
    outcome            text NOT NULL CHECK (outcome IN ('conflict', 'rejected', 'expired')),
    code               text NOT NULL,
    message            text NOT NULL,
    -- For a conflict: the resources that were full, and when.
    busy               jsonb NOT NULL DEFAULT '[]',
    intent             jsonb NOT NULL,
    intent_fingerprint bytea NOT NULL,
    -- The version the request expected; the refusal may be that it changed.
    policy_version     text NOT NULL,
    decided_at         timestamptz NOT NULL
);

-- The short reference a caller quotes ("BS-7K2D-QF4M") is the first five
-- bytes of a hash of the key (receipt.Reference). These indexes resolve it
-- back to the key, for bookings and refusals alike, with no column to keep
-- in step.
CREATE FUNCTION request_reference(key text) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(sha256(convert_to('bookingsaga/reference/' || key, 'UTF8')), 1, 5)
$$;

CREATE INDEX booking_reference ON booking (request_reference(request_key));
CREATE INDEX booking_refusal_reference ON booking_refusal (request_reference(request_key));
