-- Scheduling that agencies need (booking.Rules): a resource's own working
-- hours, dates with other hours, time off, notice, horizon and limits, as
-- one document the store validates and reads under the commit's lock. NULL
-- is the policy's rules alone; the one-statement fast path leaves every
-- commit touching a resource with rules to the full path.
ALTER TABLE resource ADD COLUMN rules jsonb CHECK (rules IS NULL OR jsonb_typeof(rules) = 'object');

-- How far ahead a booking may start, in days; 0 is no limit.
ALTER TABLE policy ADD COLUMN horizon_days integer NOT NULL DEFAULT 0 CHECK (horizon_days BETWEEN 0 AND 3660);

-- A named team of agents: a booking may ask for "whoever is free" in it,
-- and the commit chooses the agent under the members' locks.
CREATE TABLE agent_pool (
    pool_id    text PRIMARY KEY CHECK (length(pool_id) BETWEEN 1 AND 255),
    members    text[] NOT NULL CHECK (cardinality(members) BETWEEN 1 AND 50),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The pool a booking asked for, when the commit chose its agent; a retry
-- of the key replays that agent.
ALTER TABLE booking ADD COLUMN agent_pool_id text;
