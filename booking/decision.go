package booking

import (
	"errors"
	"time"
)

// What the store decided on a request key, and the log it keeps of each
// booking. The records every layer shares live in one file per noun
// (booking.go, resource.go, policy.go, contact.go, availability.go,
// listing.go, drift.go, webhook.go); internal/store is their PostgreSQL
// home, and nothing here knows about PostgreSQL.

// Outcomes of a decision that booked nothing.
const (
	RefusedConflict = "conflict"
	RefusedRejected = "rejected"
	// RefusedExpired is an intent that lapsed before anyone committed it.
	RefusedExpired = "expired"
	// RefusedWithdrawn is a key its caller cancelled while its call was
	// pending and nothing had decided it: it never books.
	RefusedWithdrawn = "withdrawn"
)

// Event is one entry of a booking's append-only log.
type Event struct {
	Kind       string    `json:"kind"`
	Detail     string    `json:"detail"`
	OccurredAt time.Time `json:"occurred_at"`
}

// Refusal is a decision on a request_key that booked nothing: a conflict
// or a refusal decided under the commit's locks, or a lapsed intent. It is
// kept for good, and replayed to every later request under the key.
type Refusal struct {
	RequestKey    string    `json:"request_key"`
	Outcome       string    `json:"outcome"`
	Code          Code      `json:"code"`
	Message       string    `json:"message"`
	Busy          []Busy    `json:"busy,omitempty"`
	Intent        Intent    `json:"intent"`
	PolicyVersion string    `json:"policy_version"`
	DecidedAt     time.Time `json:"decided_at"`
}

// Err is the refusal as the commit returns it: a conflict outcome, or a
// *Rejection.
func (r Refusal) Err() error {
	if r.Outcome == RefusedConflict {
		return nil
	}
	return &Rejection{Code: r.Code, Message: r.Message}
}

// Decision is everything the store decided on one request_key: exactly one
// of Booking and Refusal is set.
type Decision struct {
	Booking *Booking `json:"booking,omitempty"`
	Refusal *Refusal `json:"refusal,omitempty"`
}

// MirrorRecord is where a booking was mirrored. Empty fields are left as
// they are.
type MirrorRecord struct {
	RequestKey      string
	ProviderEventID string
	CRMRef          string
}

// ErrOverloaded means a booking call was not sent: as many as the saga
// client admits are in flight already. Nothing reached Temporal, so the
// same call may be sent again, with the same request_key, in a moment.
var ErrOverloaded = errors.New("bookingsaga is at capacity: the call was not sent")

// ErrNotFound means the store authoritatively has no booking for the key.
var ErrNotFound = errors.New("booking not found")
