package api

import (
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The API's answers are wire structs of their own, not the domain's
// records: a field renamed inside the service does not change what agents
// parse. (Receipts are already a wire shape: package receipt.)

// AvailabilityAnswer is GET /v1/availability: free slots under a policy
// version, as of a moment. An offer, not a promise.
type AvailabilityAnswer struct {
	PolicyVersion string       `json:"policy_version"`
	SnapshotAt    time.Time    `json:"snapshot_at"`
	TimeZone      string       `json:"time_zone"`
	Slots         []SlotAnswer `json:"slots"`
}

// SlotAnswer is one free start.
type SlotAnswer struct {
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	LocalStart string    `json:"local_start"`
}

func availabilityAnswer(av booking.Availability) AvailabilityAnswer {
	out := AvailabilityAnswer{PolicyVersion: av.PolicyVersion, SnapshotAt: av.SnapshotAt, TimeZone: av.TimeZone,
		Slots: make([]SlotAnswer, 0, len(av.Slots))}
	for _, s := range av.Slots {
		out.Slots = append(out.Slots, SlotAnswer{StartsAt: s.StartsAt, EndsAt: s.EndsAt, LocalStart: s.LocalStart})
	}
	return out
}

// ResourceAnswer is PUT /v1/resources/{id}'s answer: the resource as
// stored.
type ResourceAnswer struct {
	ID string `json:"id"`
	ResourceBody
}
