package edge

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Calls are the booking calls every route package makes through the desk
// (*desk.Desk implements it), each within the commit wait and a margin,
// and the conversation's pending rule (Pick, BookIn). As a port, the edge
// links no Temporal package and no store: the saga client under the desk
// is the one place that speaks Temporal and translates its errors.
type Calls interface {
	Commit(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error)
	Hold(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error)
	Status(ctx context.Context, key string) (receipt.Receipt, error)
	ByReference(ctx context.Context, ref string) (receipt.Receipt, error)
	Cancel(ctx context.Context, key string) (receipt.Receipt, error)
	Reschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error)
	Pick(ctx context.Context, conv string, in booking.Intent) (string, error)
	BookIn(ctx context.Context, conv string, in booking.Intent,
		call func(ctx context.Context, key string) (receipt.Receipt, error)) (string, receipt.Receipt, error)
}

// The answers are wire structs of their own, not the domain's records: a
// field renamed inside the service does not change what agents parse.
// (Receipts are already a wire shape: package receipt.)

// WriteReceipt answers a receipt already in its wire shape. A refusal
// caused by the request (an unknown resource, say) is a 400 and a key
// reused for another intent a 409; every other outcome, conflict
// included, is a 200 whose status says what happened.
func WriteReceipt(w http.ResponseWriter, r receipt.Receipt) error {
	if r.Status == receipt.StatusRejected && r.Reason != nil {
		switch {
		case booking.Code(r.Reason.Code).Input():
			return WriteJSON(w, http.StatusBadRequest, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		case r.Reason.Code == string(booking.CodeRequestKeyReused):
			return WriteJSON(w, http.StatusConflict, &Error{Code: r.Reason.Code, Message: r.Reason.Message})
		}
	}
	return WriteJSON(w, http.StatusOK, r)
}

// Reconfirmed fills r's ReconfirmedAt from the store, for a status read
// of a confirmed booking: the caller's reply to their reminder, which
// the saga's receipt does not carry. A read that fails leaves it out.
func Reconfirmed(ctx context.Context, bookings Bookings, r *receipt.Receipt) {
	if bookings == nil || r.Status != receipt.StatusConfirmed {
		return
	}
	if b, err := bookings.Lookup(ctx, r.RequestKey); err == nil {
		r.ReconfirmedAt = b.ReconfirmedAt
	}
}

// AvailabilityAnswer is GET /v1/availability: free slots under a policy
// version, as of a moment. An offer, not a promise.
type AvailabilityAnswer struct {
	PolicyVersion string       `json:"policy_version"`
	ZoneRules     string       `json:"zone_rules"`
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

// AvailabilityOf is av in its wire shape.
func AvailabilityOf(av booking.Availability) AvailabilityAnswer {
	out := AvailabilityAnswer{PolicyVersion: av.PolicyVersion, ZoneRules: av.ZoneRules, SnapshotAt: av.SnapshotAt, TimeZone: av.TimeZone,
		Slots: make([]SlotAnswer, 0, len(av.Slots))}
	for _, s := range av.Slots {
		out.Slots = append(out.Slots, SlotAnswer{StartsAt: s.StartsAt.UTC(), EndsAt: s.EndsAt.UTC(), LocalStart: s.LocalStart})
	}
	return out
}

// Language is a call's language tag, or def when it names none.
func Language(tag string, def speech.Lang) (speech.Lang, error) {
	if tag == "" {
		return def, nil
	}
	return speech.ParseLang(tag)
}

// DefaultMove fills what body leaves out from the booking of key, as the
// store (bookings) holds it; without bookings it leaves body as it is. A
// booking the store doesn't hold yet (its outcome pending) can't be moved
// by what changes: the caller hears so.
func DefaultMove(ctx context.Context, bookings Bookings, key string, body *RescheduleBody) error {
	if bookings == nil {
		return nil
	}
	old, err := bookings.Lookup(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return BadRequest(booking.CodeNotBooked, "the store holds no booking under %s to move; check its status first", key)
	}
	if err != nil {
		return err
	}
	var current string
	if body.ExpectedPolicyVersion == "" {
		p, err := bookings.CurrentPolicy(ctx)
		if err != nil {
			return err
		}
		current = p.Version
	}
	body.DefaultFrom(old.Intent, current)
	return nil
}
