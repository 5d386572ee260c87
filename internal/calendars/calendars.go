// Package calendars is the calendar mirror in bookingsaga's own terms,
// whatever the provider behind it (Google Calendar: internal/gcal;
// Microsoft 365 through Graph: internal/msgraph): the booking an event
// shows, what a write did, events as reconciliation lists them, busy
// intervals, and the errors that say a write can never succeed. The
// activities and the catalogue own the interfaces they call through;
// providers speak these types, so none of theirs leaks past them, and a
// Router sends each call to the provider of its calendar.
package calendars

import (
	"errors"
	"fmt"
	"time"
)

// Ref names one calendar: its provider (booking.ProviderGoogle or
// booking.ProviderMicrosoft) and the provider's id for it (a Google
// calendar id, or a Microsoft 365 user's or room's mailbox).
type Ref struct {
	Provider, ID string
}

func (r Ref) String() string { return r.Provider + ":" + r.ID }

// Booking is what a calendar shows of a booking.
type Booking struct {
	Calendar    Ref
	BookingID   string
	RequestKey  string
	PropertyRef string
	// Reference is the short booking reference people quote.
	Reference string
	StartsAt  time.Time
	EndsAt    time.Time
	TimeZone  string
	Attendees []string
}

// Synced is the state of an event after a write.
type Synced struct {
	EventID string
	ETag    string
	// Restored is set when a cancelled tombstone of ours was revived, and
	// Corrected when a live event of ours was brought back in line.
	Restored, Corrected bool
}

// Event is an event as bookingsaga needs to know it.
type Event struct {
	ID      string
	Summary string
	// Status is the provider's: "confirmed", "tentative", "cancelled".
	Status string
	Start  time.Time
	End    time.Time
	// Ours is set for events bookingsaga wrote; RequestKey and BookingID
	// are then read from its private marker.
	Ours       bool
	RequestKey string
	BookingID  string
}

// Interval is a busy period.
type Interval struct{ Start, End time.Time }

// ForeignEventError means the event is not bookingsaga's. It is never
// overwritten; an operator has to look.
type ForeignEventError struct {
	CalendarID, EventID string
	// Why says what gave it away, when there is more to say than "no
	// marker of ours".
	Why string
}

func (e *ForeignEventError) Error() string {
	msg := fmt.Sprintf("event %s in calendar %s is not bookingsaga's; not overwritten", e.EventID, e.CalendarID)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// MaxRaces bounds how often a provider's write re-reads after a 412
// (Precondition Failed): each round means someone else changed the event
// in between, which should be rare.
const MaxRaces = 3

// ErrReadOnly is a write asked of a client built to read only (the API's):
// it holds no write credentials, and a bug must not find one.
var ErrReadOnly = &RefusedError{Err: errors.New("this calendar client only reads")}

// RefusedError is a provider's final no (a 4xx other than timeouts and
// rate limits): retrying the same write cannot change it.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Permanent reports whether retrying cannot change err: a foreign event,
// or a provider's refusal.
func Permanent(err error) bool {
	var fe *ForeignEventError
	var re *RefusedError
	return errors.As(err, &fe) || errors.As(err, &re)
}
