// Package crm mirrors bookings into a CRM as viewing records. The CRM is a
// copy written after the booking store commits; nothing it says makes or
// unmakes a booking.
package crm

import (
	"context"
	"errors"
	"time"
)

// Status is the state of a viewing as the CRM shows it.
type Status string

// Viewing statuses.
const (
	StatusScheduled   Status = "scheduled"
	StatusCancelled   Status = "cancelled"
	StatusRescheduled Status = "rescheduled"
)

// Viewing is the record bookingsaga keeps in a CRM, keyed by booking id. It
// holds references, not the caller's contact details.
type Viewing struct {
	BookingID   string    `json:"booking_id"`
	RequestKey  string    `json:"request_key"`
	PropertyRef string    `json:"property_ref"`
	AgentRef    string    `json:"agent_ref"`
	StartsAt    time.Time `json:"starts_at"`
	EndsAt      time.Time `json:"ends_at"`
	TimeZone    string    `json:"time_zone"`
	Status      Status    `json:"status"`
	// ReplacedBy is the request key of the replacement after a reschedule.
	ReplacedBy string `json:"replaced_by,omitempty"`
	// Outcome is how the viewing went, once the agency recorded it
	// (attended, no_show, cancelled_by_agency).
	Outcome string `json:"outcome,omitempty"`
	// Title is what staff see the viewing as, in the agency's language,
	// with the property and agent by display name; a CRM without titles
	// ignores it.
	Title string `json:"title,omitempty"`
}

// Record is a viewing as stored in the CRM, with the CRM's own id.
type Record struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
	Viewing
	// Contacts are the CRM contacts the record is associated with, as
	// a CRM that keeps contacts (Contacts) reads them back.
	Contacts []string `json:"contacts,omitempty"`
}

// CRM is what bookingsaga needs from a CRM. It is narrow on purpose so that
// HubSpot or Salesforce adapters can implement it: an idempotent upsert
// keyed by booking id (cancel and reschedule are upserts with a new
// status), and a read for reconciliation.
type CRM interface {
	// Upsert writes v. over is the version of the record the write
	// corrects, as the writer read it, Absent when it read that there is
	// none, or 0 when it read nothing: the same state written again over
	// another version, or over a record deleted since, is a new write,
	// not a retry, so a correction lands even when the CRM held that
	// state once before a stale write replaced it or a person deleted it.
	Upsert(ctx context.Context, v Viewing, over int) (Record, error)
	// Get returns ErrNotFound when the CRM has no record of the booking.
	Get(ctx context.Context, bookingID string) (Record, error)
}

// Absent, as an upsert's over, says the writer read that the CRM holds
// no record of the booking.
const Absent = -1

// ErrNotFound means the CRM answered that it has no such record.
var ErrNotFound = errors.New("crm: viewing not found")

// Cancelled returns v marked cancelled.
func (v Viewing) Cancelled() Viewing {
	v.Status = StatusCancelled
	return v
}

// RescheduledTo returns v marked as replaced by the booking with request key newKey.
func (v Viewing) RescheduledTo(newKey string) Viewing {
	v.Status, v.ReplacedBy = StatusRescheduled, newKey
	return v
}

// Caller is the person a viewing is for, as a CRM that keeps contacts
// holds them: given to it only where the caller agreed to be kept on
// file.
type Caller struct {
	Name, Email, Phone string
	// ContactID is the contact an earlier link found or made, "" when
	// none.
	ContactID string
}

// Contacts is a CRM that keeps callers as contacts of its own, with
// their viewings on them. The agency's own contacts are the agency's: a
// contact the service did not make is linked to, never deleted.
type Contacts interface {
	// Link finds c's contact (the one linked before, followed through a
	// merge staff made; else one with c's exact e-mail, or c's phone and
	// name), creates one of the service's own where none is found, and
	// associates the record recordID with it. Linking again changes
	// nothing.
	Link(ctx context.Context, recordID string, c Caller) (Linked, error)
	// Forget deletes a contact the service made, as the CRM's privacy
	// API does; one gone already is forgotten.
	Forget(ctx context.Context, contactID string) error
	// Unlink takes the records recordIDs off a contact the service did
	// not make, which stays as the agency keeps it; a record or a contact
	// gone already is unlinked.
	Unlink(ctx context.Context, contactID string, recordIDs []string) error
}

// Linked is the contact a Link found or made.
type Linked struct {
	ContactID string
	// Created is set when the service made the contact: only such a
	// contact is ever deleted.
	Created bool
}

// Router is a deployment's CRMs by name, for agencies that keep different
// ones: a property names its agency's (booking.Resource.CRM), and ""
// is the default's. A nil Router keeps no CRM.
type Router struct {
	byName map[string]CRM
	def    string
}

// NewRouter routes "" to byName[def]; CRMs that are nil are left out.
func NewRouter(def string, byName map[string]CRM) *Router {
	r := &Router{byName: map[string]CRM{}, def: def}
	for name, c := range byName {
		if c != nil {
			r.byName[name] = c
		}
	}
	if len(r.byName) == 0 {
		return nil
	}
	return r
}

// For is the CRM named, the default for "", with its name; nil when
// none such is kept.
func (r *Router) For(name string) (CRM, string) {
	if r == nil {
		return nil, name
	}
	if name == "" {
		name = r.def
	}
	return r.byName[name], name
}
