package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/internal/booking"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// CommitInput asks for one intent to be booked under its request key.
type CommitInput struct {
	RequestKey            string
	Intent                booking.Intent
	ExpectedPolicyVersion string
	Hold                  bool
	Contact               *store.Contact
}

// CommitOutput is a booking the store holds for the key.
type CommitOutput struct {
	Booking  store.Booking
	Replayed bool
}

// Commit books the intent in the store, the only place a booking becomes
// real. The resources' calendars are checked first for events written past
// the service, then the store decides under its locks; a key it already
// knows is replayed. A conflict or refusal is a non-retryable
// error; anything else is technical, and safe to retry with the same key.
func (a *Activities) Commit(ctx context.Context, in CommitInput) (out CommitOutput, err error) {
	defer a.countCommit(time.Now(), &out, &err)
	return a.commit(ctx, in)
}

// countCommit records the commit's outcome and latency.
func (a *Activities) countCommit(start time.Time, out *CommitOutput, err *error) {
	outcome := string(out.Booking.Status)
	var appErr *temporal.ApplicationError
	switch {
	case *err != nil && errors.As(*err, &appErr) && appErr.Type() == ErrTypeConflict:
		outcome = "conflict"
	case *err != nil && errors.As(*err, &appErr) && appErr.Type() == ErrTypeRejected:
		outcome = "rejected"
	case *err != nil:
		outcome = "error"
	case out.Replayed:
		outcome = "replayed"
	}
	m := a.metrics()
	m.Tagged(map[string]string{"outcome": outcome}).Counter("commits_total").Inc(1)
	m.Timer("commit_latency").Record(time.Since(start))
}

func (a *Activities) commit(ctx context.Context, in CommitInput) (CommitOutput, error) {
	// No lookup first: a key the store already booked is live, so its own
	// time is subtracted from free/busy and the commit below replays it.
	blocks := a.calendarBlocks(ctx, in.Intent.Resources(), in.Intent.StartsAt, in.Intent.EndsAt)
	if busy := blocked(blocks, in.Intent.StartsAt, in.Intent.EndsAt); len(busy) > 0 {
		return CommitOutput{}, conflictError(ConflictDetail{Busy: busy, Source: "calendar"})
	}
	out, err := a.Store.Commit(ctx, store.CommitRequest{RequestKey: in.RequestKey, Intent: in.Intent,
		ExpectedPolicyVersion: in.ExpectedPolicyVersion, Hold: in.Hold, Contact: in.Contact})
	if err != nil {
		return CommitOutput{}, storeError("commit", in.RequestKey, err)
	}
	if out.Conflict != nil {
		return CommitOutput{}, conflictError(ConflictDetail{Busy: out.Conflict.Busy, Source: "store"})
	}
	return CommitOutput{Booking: out.Booking, Replayed: out.Replayed}, nil
}

// KeyInput names one booking by its request key.
type KeyInput struct {
	RequestKey string
}

// LookupOutput is the store's authoritative answer about a key.
type LookupOutput struct {
	Found   bool
	Booking store.Booking
}

// Lookup reads a booking. Found=false is authoritative: the store has no
// booking for the key, so a commit with the same key is safe.
func (a *Activities) Lookup(ctx context.Context, in KeyInput) (LookupOutput, error) {
	b, err := a.Store.Lookup(ctx, in.RequestKey)
	if errors.Is(err, store.ErrNotFound) {
		return LookupOutput{}, nil
	}
	if err != nil {
		return LookupOutput{}, storeError("lookup", in.RequestKey, err)
	}
	return LookupOutput{Found: true, Booking: b}, nil
}

// Confirm turns the key's hold into a booking; an expired hold is refused.
func (a *Activities) Confirm(ctx context.Context, in KeyInput) (out CommitOutput, err error) {
	defer a.countCommit(time.Now(), &out, &err)
	return a.confirm(ctx, in)
}

func (a *Activities) confirm(ctx context.Context, in KeyInput) (CommitOutput, error) {
	b, err := a.Store.Confirm(ctx, in.RequestKey)
	if err != nil {
		return CommitOutput{}, storeError("confirm", in.RequestKey, err)
	}
	if b.Status != booking.StatusConfirmed {
		return CommitOutput{}, rejectedError(booking.Rejectf(booking.CodeHoldExpired, "the hold on this slot is %s", b.Status))
	}
	return CommitOutput{Booking: b}, nil
}

// ExpireHold expires the key's hold if it is past its time.
func (a *Activities) ExpireHold(ctx context.Context, in KeyInput) (LookupOutput, error) {
	b, err := a.Store.ExpireHold(ctx, in.RequestKey)
	if err != nil {
		return LookupOutput{}, storeError("expire hold", in.RequestKey, err)
	}
	return LookupOutput{Found: true, Booking: b}, nil
}

// ReleaseInput cancels a booking, or releases it for its replacement.
type ReleaseInput struct {
	RequestKey string
	ReplacedBy string
}

// Release frees the booking's capacity; releasing twice is harmless.
func (a *Activities) Release(ctx context.Context, in ReleaseInput) (LookupOutput, error) {
	b, err := a.Store.Release(ctx, store.ReleaseRequest{RequestKey: in.RequestKey, ReplacedBy: in.ReplacedBy})
	if errors.Is(err, store.ErrNotFound) {
		return LookupOutput{}, nil
	}
	if err != nil {
		return LookupOutput{}, storeError("release", in.RequestKey, err)
	}
	return LookupOutput{Found: true, Booking: b}, nil
}
