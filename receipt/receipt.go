// Package receipt defines what an agent is told after each booking call.
// The agent words its reply from Status alone: only StatusConfirmed may be
// read out as "your booking is confirmed".
package receipt

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Status is the outcome an agent may act on.
type Status string

// Receipt statuses.
const (
	StatusConfirmed Status = "confirmed"
	StatusHeld      Status = "held"
	StatusConflict  Status = "conflict"
	StatusRejected  Status = "rejected"
	// StatusPending means the outcome is not known yet. The agent must not
	// say the booking is made; it gives the reference and checks later with
	// the same request_key.
	StatusPending   Status = "pending_reconciliation"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
	// StatusRescheduled is the old booking's status once its replacement
	// is confirmed and it has been released.
	StatusRescheduled Status = "rescheduled"
	// StatusReassigned is a booking staff gave to another agent and
	// changed nothing else: the viewing stands, at the same time and
	// place, with AgentRef, under ReplacedBy.
	StatusReassigned Status = "reassigned"
	// StatusOffered is an intent that has not been committed yet.
	StatusOffered Status = "offered"
)

// Receipt is the answer to a booking call.
type Receipt struct {
	RequestKey      string     `json:"request_key"`
	Status          Status     `json:"status"`
	PropertyRef     string     `json:"property_ref,omitempty"`
	AgentRef        string     `json:"agent_ref,omitempty"`
	StartsAt        *time.Time `json:"starts_at,omitempty"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	TimeZone        string     `json:"time_zone,omitempty"`
	LocalStart      string     `json:"local_start,omitempty"`
	BookingID       string     `json:"booking_id,omitempty"`
	ProviderEventID string     `json:"provider_event_id,omitempty"`
	PolicyVersion   string     `json:"policy_version,omitempty"`
	CommittedAt     *time.Time `json:"committed_at,omitempty"`
	HoldExpiresAt   *time.Time `json:"hold_expires_at,omitempty"`
	Reason          *Reason    `json:"reason,omitempty"`
	// Reference is what the caller quotes back (BS-XXXX-XXXX).
	Reference string `json:"reference,omitempty"`
	// Spoken is the line a voice agent reads for this receipt, in the
	// language asked for; the API fills it in.
	Spoken string `json:"spoken,omitempty"`
	// Replaces is the request_key this booking reschedules; ReplacedBy is
	// set on a booking that was rescheduled.
	Replaces     string `json:"replaces,omitempty"`
	ReplacedBy   string `json:"replaced_by,omitempty"`
	Alternatives []Slot `json:"alternatives,omitempty"`
	// ReconfirmedAt is when the caller replied to their reminder that
	// they are coming; the API fills it from the store on a status read
	// of a confirmed booking (the saga never sets it).
	ReconfirmedAt *time.Time `json:"reconfirmed_at,omitempty"`
}

// Reason explains a conflict or a refusal.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retryable means the same request_key may be sent again (a technical
	// failure); false means the request itself has to change.
	Retryable bool `json:"retryable"`
	// Busy names the resources that were full, for a conflict.
	Busy []Busy `json:"busy,omitempty"`
}

// Busy is a resource that is full during a window.
type Busy struct {
	ResourceID string    `json:"resource_id"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
}

// Slot is a free alternative offered with a conflict.
type Slot struct {
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	LocalStart string    `json:"local_start"`
}

// Pending is the answer to a call whose outcome may have happened: the
// request may have reached Temporal, so it is never a failure. The saga,
// or reconciliation, settles it; the agent checks again with the same key
// or the reference.
func Pending(requestKey string) Receipt {
	return Receipt{RequestKey: requestKey, Status: StatusPending, Reference: Reference(requestKey)}
}

// Reference derives the short reference people quote for a request key,
// e.g. "BS-7K2D-QF4M": stable across retries and workers.
func Reference(requestKey string) string {
	sum := sha256.Sum256([]byte("bookingsaga/reference/" + requestKey))
	return spell(sum[:5])
}

// spell writes a reference's five bytes as people quote them.
func spell(raw []byte) string {
	s := base32.StdEncoding.EncodeToString(raw)
	return booking.ReferencePrefix + s[:4] + "-" + s[4:8]
}

// HeldError is a call not sent because an earlier booking of its
// conversation is still pending: the caller checks that one first.
// Nothing was sent, and the call's own key holds nothing.
type HeldError struct {
	// Earlier is the pending booking's receipt.
	Earlier Receipt
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("an earlier booking of this conversation (request_key %s, reference %s) is not settled", e.Earlier.RequestKey, e.Earlier.Reference)
}

// ReferenceBytes reads a reference as a caller may say or type it
// ("BS-7K2D-QF4M", "bs7k2d qf4m", "BS-7-K-2-D…": the prefix, then the
// eight characters, case and dashes aside) back into the five hash bytes
// the store indexes it by. Anything else is refused invalid_reference.
func ReferenceBytes(ref string) ([]byte, error) {
	code, ok := strings.CutPrefix(strings.ToUpper(strings.TrimSpace(ref)), booking.ReferencePrefix[:2])
	code = strings.NewReplacer("-", "", " ", "").Replace(code)
	raw, err := base32.StdEncoding.DecodeString(code)
	if !ok || err != nil || len(raw) != 5 {
		return nil, booking.Rejectf(booking.CodeInvalidReference, "reference %q is not of the form BS-XXXX-XXXX", ref)
	}
	return raw, nil
}

// CanonicalReference is ref as Reference writes it: one spelling per
// booking, for whatever counts attempts by reference.
func CanonicalReference(ref string) (string, error) {
	raw, err := ReferenceBytes(ref)
	if err != nil {
		return "", err
	}
	return spell(raw), nil
}
