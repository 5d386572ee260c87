-- What may be said about a property, and the calls that need a person.
--
-- facts: the answers an admin approved for a property, each with its
-- source and when it was approved (booking.Fact); the voice tools answer
-- property questions from these alone.
ALTER TABLE resource ADD COLUMN facts jsonb;

-- handoff: a caller asked for a person (a question the tools may not
-- answer: suitability, eligibility, advice, or a fact not on record). It
-- keeps what a callback needs and no more: the conversation, the kind of
-- question, the caller's stated reason in their words, and the bookings
-- of the call. It is deleted with the retention of contacts, counted from
-- when it was resolved.
CREATE TABLE handoff (
    handoff_id      bigserial PRIMARY KEY,
    conversation_id text NOT NULL CHECK (length(conversation_id) BETWEEN 1 AND 255),
    topic           text NOT NULL CHECK (topic IN ('suitability', 'eligibility', 'advice', 'property', 'booking', 'other')),
    reason          text NOT NULL CHECK (length(reason) BETWEEN 1 AND 300),
    request_keys    text[] NOT NULL DEFAULT '{}',
    requested_at    timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    note            text
);

-- The same request sent again (a re-issued tool call) is the same handoff.
CREATE UNIQUE INDEX handoff_once ON handoff (conversation_id, topic, md5(reason)) WHERE resolved_at IS NULL;
CREATE INDEX handoff_open ON handoff (requested_at) WHERE resolved_at IS NULL;
