package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"

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
// real. A key the store already knows is replayed. Otherwise the resources'
// calendars are checked first for events written past the service, then the
// store decides under its locks. A conflict or refusal is a non-retryable
// error; anything else is technical, and safe to retry with the same key.
func (a *Activities) Commit(ctx context.Context, in CommitInput) (CommitOutput, error) {
	_, err := a.Store.Lookup(ctx, in.RequestKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if busy := a.calendarBusy(ctx, in.Intent); len(busy) > 0 {
			return CommitOutput{}, conflictError(ConflictDetail{Busy: busy, Source: "calendar"})
		}
	case err != nil:
		return CommitOutput{}, storeError("commit", in.RequestKey, err)
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

// calendarBusy re-checks, right before the commit, the calendars of the
// intent's capacity-1 resources. A capacity-2 room's calendar shows our own
// bookings as busy too, so only capacity 1 can be read this way. The
// calendar is advisory: if it cannot be read the store still decides.
func (a *Activities) calendarBusy(ctx context.Context, in booking.Intent) []store.Busy {
	if a.Calendar == nil {
		return nil
	}
	type watched struct {
		res      store.Resource
		from, to time.Time
	}
	var ws []watched
	var ids []string
	for _, id := range in.Resources() {
		r, err := a.Store.Resource(ctx, id)
		if err != nil || r.Capacity != 1 || r.CalendarID == "" {
			continue
		}
		from := in.StartsAt.Add(-time.Duration(r.BufferBeforeMinutes) * time.Minute)
		to := in.EndsAt.Add(time.Duration(r.BufferAfterMinutes) * time.Minute)
		ws = append(ws, watched{r, from, to})
		ids = append(ids, r.CalendarID)
	}
	if len(ws) == 0 {
		return nil
	}
	from, to := ws[0].from, ws[0].to
	for _, w := range ws[1:] {
		from, to = minTime(from, w.from), maxTime(to, w.to)
	}
	periods, err := a.Calendar.FreeBusy(ctx, ids, from, to)
	if err != nil {
		activity.GetLogger(ctx).Warn("calendar re-check skipped; the store decides alone", "error", err)
		return nil
	}
	var busy []store.Busy
	for _, w := range ws {
		for _, p := range periods[w.res.CalendarID] {
			if p.Start.Before(w.to) && p.End.After(w.from) {
				busy = append(busy, store.Busy{ResourceID: w.res.ID, Capacity: 1, From: p.Start, To: p.End})
			}
		}
	}
	return busy
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
func (a *Activities) Confirm(ctx context.Context, in KeyInput) (CommitOutput, error) {
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
