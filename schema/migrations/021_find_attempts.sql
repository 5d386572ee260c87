-- find_booking's attempts per booking reference, counted where every API
-- process counts them: a count each process kept alone gave a caller
-- behind a load balancer its five attempts an hour once per process. A
-- row holds a hash of the canonical reference (never the reference), the
-- start of its window and the attempts made in it; retention deletes
-- windows a day old.
CREATE TABLE find_attempt (
    reference_hash bytea PRIMARY KEY CHECK (length(reference_hash) = 32),
    window_start   timestamptz NOT NULL,
    attempts       integer NOT NULL CHECK (attempts > 0)
);
