package booking

import (
	"time"
)

// Busy is a resource at capacity, and the window in which it is.
type Busy struct {
	ResourceID string    `json:"resource_id"`
	Capacity   int       `json:"capacity"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
}

// AvailabilityQuery asks for free slots for a set of resources.
type AvailabilityQuery struct {
	PropertyID string
	AgentID    string
	// AgentPool, in place of AgentID, offers a slot when any member is
	// free.
	AgentPool string
	// Blocked, when set, reports whether the calendars show any of a set
	// of resources busy over a slot (events written past the service); a
	// slot is offered only with a set it does not block.
	Blocked        func(start, end time.Time, resourceIDs []string) bool `json:"-"`
	ExtraResources []string
	From, To       time.Time
	// Duration defaults to the policy's slot length.
	Duration time.Duration
}

// Availability is a snapshot of candidate slots: an offer, not a promise.
// Only Commit decides.
type Availability struct {
	PolicyVersion string `json:"policy_version"`
	// ZoneRules is the release of the zone rules the slots' instants
	// were resolved under; a booking may pass it back as
	// expected_zone_rules.
	ZoneRules  string    `json:"zone_rules"`
	SnapshotAt time.Time `json:"snapshot_at"`
	TimeZone   string    `json:"time_zone"`
	Slots      []Slot    `json:"slots"`
}

// Slot is one free start time.
type Slot struct {
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	LocalStart string    `json:"local_start"`
}

// Span is a half-open interval [Start, End), like tstzrange's default: a
// booking's time, or what it occupies with its buffers.
type Span struct {
	Start, End time.Time
}
