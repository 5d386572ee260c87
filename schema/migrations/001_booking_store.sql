-- The authoritative booking store. A booking exists when, and only when, a
-- row in booking is live here; calendars and CRMs are mirrors written later.

CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE resource (
    resource_id           text PRIMARY KEY CHECK (length(resource_id) BETWEEN 1 AND 255),
    kind                  text NOT NULL CHECK (kind IN ('property', 'agent', 'key_holder', 'room', 'other')),
    capacity              integer NOT NULL CHECK (capacity >= 1),
    time_zone             text NOT NULL CHECK (length(time_zone) > 0),
    buffer_before_minutes integer NOT NULL DEFAULT 0 CHECK (buffer_before_minutes BETWEEN 0 AND 1440),
    buffer_after_minutes  integer NOT NULL DEFAULT 0 CHECK (buffer_after_minutes BETWEEN 0 AND 1440),
    calendar_id           text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Policies are versioned and never edited in place: a receipt names the
-- version it was decided under, so that version must stay readable.
CREATE TABLE policy (
    version                       text PRIMARY KEY CHECK (length(version) BETWEEN 1 AND 100),
    slot_minutes                  integer NOT NULL CHECK (slot_minutes BETWEEN 5 AND 1440),
    default_buffer_before_minutes integer NOT NULL DEFAULT 0 CHECK (default_buffer_before_minutes BETWEEN 0 AND 1440),
    default_buffer_after_minutes  integer NOT NULL DEFAULT 0 CHECK (default_buffer_after_minutes BETWEEN 0 AND 1440),
    -- Bookable hours, in each property's own local time.
    opens_at                      time NOT NULL,
    closes_at                     time NOT NULL,
    hold_ttl_seconds              integer NOT NULL CHECK (hold_ttl_seconds BETWEEN 1 AND 86400),
    min_notice_minutes            integer NOT NULL DEFAULT 0 CHECK (min_notice_minutes >= 0),
    is_current                    boolean NOT NULL DEFAULT false,
    created_at                    timestamptz NOT NULL DEFAULT now(),
    CHECK (closes_at > opens_at)
);

-- Exactly one current version: at most one by this index, at least one by
-- the store, which switches versions in a single transaction.
CREATE UNIQUE INDEX policy_one_current ON policy ((true)) WHERE is_current;

CREATE TABLE booking (
    booking_id           uuid PRIMARY KEY,
    request_key          text NOT NULL UNIQUE CHECK (length(request_key) BETWEEN 1 AND 255),
    status               text NOT NULL CHECK (status IN
                             ('held', 'confirmed', 'cancelled', 'expired', 'released_for_reschedule')),
    property_id          text NOT NULL REFERENCES resource,
    agent_id             text NOT NULL REFERENCES resource,
    extra_resource_ids   text[] NOT NULL DEFAULT '{}',
    starts_at            timestamptz NOT NULL,
    ends_at              timestamptz NOT NULL,
    time_zone            text NOT NULL,
    policy_version       text NOT NULL REFERENCES policy,
    -- sha256 of the intent: the same request_key must always mean the same intent.
    intent_fingerprint   bytea NOT NULL,
    hold_expires_at      timestamptz,
    provider_event_id    text,
    crm_ref              text,
    -- A reschedule is a new booking naming the one it replaces; the old one
    -- is released only once the new one is confirmed, and then names it back.
    replaces_request_key    text,
    replaced_by_request_key text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    committed_at         timestamptz,
    released_at          timestamptz,
    CHECK (ends_at > starts_at),
    CHECK (status <> 'held' OR hold_expires_at IS NOT NULL)
);

CREATE INDEX booking_held_expiry ON booking (hold_expires_at) WHERE status = 'held';

-- What each booking occupies. occupied already includes the resource's
-- buffers, so every conflict question is a plain range overlap.
CREATE TABLE booking_resource (
    booking_id  uuid NOT NULL REFERENCES booking ON DELETE CASCADE,
    resource_id text NOT NULL REFERENCES resource,
    occupied    tstzrange NOT NULL CHECK (NOT isempty(occupied)),
    -- live mirrors booking.status IN ('held', 'confirmed'); it lives here so
    -- the exclusion constraint below can see it.
    live        boolean NOT NULL,
    -- capacity = 1 when written; kept in step when a resource's capacity changes.
    exclusive   boolean NOT NULL,
    PRIMARY KEY (booking_id, resource_id),
    -- The service decides capacity under row locks; this is the backstop
    -- against any writer that bypasses it.
    CONSTRAINT booking_resource_no_overlap
        EXCLUDE USING gist (resource_id WITH =, occupied WITH &&) WHERE (live AND exclusive)
);

-- Live rows of capacity-1 resources are already indexed by the exclusion
-- constraint; this covers the rest, so no row pays for two GiST entries.
CREATE INDEX booking_resource_live_shared ON booking_resource USING gist (resource_id, occupied)
    WHERE live AND NOT exclusive;

-- Append-only: what was asked, what was decided, when.
CREATE TABLE booking_event (
    event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_key text NOT NULL,
    booking_id  uuid,
    kind        text NOT NULL,
    detail      jsonb NOT NULL DEFAULT '{}',
    occurred_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX booking_event_request_key ON booking_event (request_key, event_id);

CREATE FUNCTION booking_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'booking_event is append-only';
END;
$$;

CREATE TRIGGER booking_event_append_only
    BEFORE UPDATE OR DELETE ON booking_event
    FOR EACH ROW EXECUTE FUNCTION booking_event_append_only();

-- Personal data lives apart from the booking so it can be purged at its
-- retention deadline without touching the booking or its audit trail.
CREATE TABLE booking_contact (
    booking_id   uuid PRIMARY KEY REFERENCES booking ON DELETE CASCADE,
    name         text,
    phone        text,
    email        text,
    retain_until timestamptz NOT NULL
);

-- Each resource's effective buffers: its own, but never less than the
-- current policy's defaults. Commit and availability both read this, so the
-- two can never disagree about what a booking occupies.
CREATE VIEW resource_buffers AS
SELECT r.resource_id,
       greatest(r.buffer_before_minutes, coalesce(p.default_buffer_before_minutes, 0)) AS before_minutes,
       greatest(r.buffer_after_minutes, coalesce(p.default_buffer_after_minutes, 0)) AS after_minutes
FROM resource r
LEFT JOIN policy p ON p.is_current;

-- The live bookings on one resource overlapping a range. The two arms match
-- the two partial indexes (exclusive and shared live rows); as a one-query
-- SQL function it is inlined into its callers' plans.
CREATE FUNCTION live_occupancy(p_resource text, p_range tstzrange)
RETURNS TABLE (booking_id uuid, occupied tstzrange)
LANGUAGE sql STABLE AS $$
    SELECT booking_id, occupied FROM booking_resource
    WHERE resource_id = p_resource AND live AND exclusive AND occupied && p_range
    UNION ALL
    SELECT booking_id, occupied FROM booking_resource
    WHERE resource_id = p_resource AND live AND NOT exclusive AND occupied && p_range
$$;
