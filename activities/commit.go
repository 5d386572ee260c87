package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// The decision path: the commit and everything that reads or changes
// what the store decided on a key.

// Commit books the intent in the store, the only place a booking becomes
// real. The resources' calendars are checked first for events written past
// the service, then the store decides under its locks; a key it already
// knows is replayed. A conflict or refusal is a non-retryable
// error; anything else is technical, and safe to retry with the same key.
func (a *Activities) Commit(ctx context.Context, in booking.CommitInput) (out booking.CommitOutput, err error) {
	defer a.turns.begin()()
	defer a.countCommit(ctx, time.Now(), &out, &err)
	return a.commit(ctx, in)
}

// countCommit records the commit's outcome and latency.
func (a *Activities) countCommit(ctx context.Context, start time.Time, out *booking.CommitOutput, err *error) {
	outcome := string(out.Booking.Status)
	var appErr *temporal.ApplicationError
	switch {
	case *err != nil && errors.As(*err, &appErr) && appErr.Type() == booking.ErrTypeConflict:
		outcome = "conflict"
	case *err != nil && errors.As(*err, &appErr) && appErr.Type() == booking.ErrTypeRejected:
		outcome = "rejected"
	case *err != nil:
		outcome = "error"
	case out.Replayed:
		outcome = "replayed"
	}
	a.metrics(ctx).Tagged(map[string]string{"outcome": outcome}).Counter("commits_total").Inc(1)
	a.histograms().Timer("commit_latency").Record(time.Since(start))
}

func (a *Activities) commit(ctx context.Context, in booking.CommitInput) (booking.CommitOutput, error) {
	req := store.CommitRequest{CommitRequest: in.CommitRequest}
	if in.Attempt > 1 {
		// The store's record outranks anything the calendar says now; the
		// commit below replays it.
		_, err := a.Store.Decision(ctx, in.RequestKey)
		if err == nil {
			return a.storeCommit(ctx, req)
		}
		if !errors.Is(err, booking.ErrNotFound) {
			return booking.CommitOutput{}, storeError("commit", in.RequestKey, err)
		}
	}
	// No lookup on a first try: a key the store already booked is live,
	// so its own time is subtracted from free/busy and the commit replays it.
	req.CalendarBusy, req.CalendarUnchecked = a.recheck(ctx, in.Intent)
	if req.CalendarUnchecked {
		a.metrics(ctx).Counter("calendar_unchecked_total").Inc(1)
	}
	return a.storeCommit(ctx, req)
}

// recheckShare is the part of an attempt's budget (one over it) that the
// calendar re-check may spend: past it the store decides alone.
const recheckShare = 4

// recheck reads the resources' calendars for events written past the
// service, within RecheckBudget and a share of the attempt's budget, in
// one try. A calendar that is slow or down leaves the decision to the
// store alone, flagged for reconciliation: it must not stop bookings, nor
// slow them by more than the budget. (With the share alone, 750 ms of a
// 3 s wait, a calendar's slow answers were the callers' p95 under mirror
// faults, and admission shed calls for them.)
func (a *Activities) recheck(ctx context.Context, in booking.Intent) (busy []booking.Busy, unchecked bool) {
	rctx := retry.Once(ctx)
	budget := a.RecheckBudget
	if dl, ok := ctx.Deadline(); ok && (budget <= 0 || time.Until(dl)/recheckShare < budget) {
		budget = time.Until(dl) / recheckShare
	}
	if budget > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, budget)
		defer cancel()
	}
	// A team's members each count: the store passes over a busy one.
	ids, err := a.reads().Resources(rctx, in)
	if err != nil {
		return nil, false // the store refuses the unknown team itself
	}
	blocks, err := a.reads().Blocks(rctx, ids, in.StartsAt, in.EndsAt)
	if err != nil {
		activity.GetLogger(ctx).Warn("calendar re-check skipped; the store decides alone", "error", err)
	}
	return catalog.Blocked(blocks, in.StartsAt, in.EndsAt), err != nil
}

// storeCommit lets the store decide, or replay what it decided.
func (a *Activities) storeCommit(ctx context.Context, req store.CommitRequest) (booking.CommitOutput, error) {
	out, err := a.Store.Commit(ctx, req)
	if err != nil {
		return booking.CommitOutput{}, storeError("commit", req.RequestKey, err)
	}
	if out.Conflict != nil {
		source := "store"
		if len(req.CalendarBusy) > 0 {
			source = "calendar"
		}
		return booking.CommitOutput{}, conflictError(booking.ConflictDetail{Busy: out.Conflict.Busy, Source: source})
	}
	b := out.Booking
	a.reads().EventID(ctx, &b)
	return booking.CommitOutput{Booking: b, Replayed: out.Replayed}, nil
}

// Lookup reads what the store decided on a key. Found=false is
// authoritative: the store decided nothing, so a commit with the same key
// is safe.
func (a *Activities) Lookup(ctx context.Context, in booking.KeyInput) (booking.LookupOutput, error) {
	d, err := a.Store.Decision(ctx, in.RequestKey)
	return a.decided(ctx, "lookup", in.RequestKey, d, err)
}

// decided turns the store's answer into a lookup's: nothing decided is an
// answer too (Found false), not an error.
func (a *Activities) decided(ctx context.Context, op, name string, d booking.Decision, err error) (booking.LookupOutput, error) {
	if errors.Is(err, booking.ErrNotFound) {
		return booking.LookupOutput{}, nil
	}
	if err != nil {
		return booking.LookupOutput{}, storeError(op, name, err)
	}
	return a.reads().Output(ctx, d), nil
}

// Withdraw records a caller's cancel of a key nothing decided yet, whose
// booking call is still pending, as the key's decision (store.Withdraw),
// and returns the decision in force: Found false when there was nothing
// to withdraw.
func (a *Activities) Withdraw(ctx context.Context, in booking.KeyInput) (booking.LookupOutput, error) {
	d, err := a.Store.Withdraw(ctx, in.RequestKey)
	return a.decided(ctx, "withdraw", in.RequestKey, d, err)
}

// Lapse records the lapse as the key's decision, unless the key was
// decided meanwhile, and returns the decision in force.
func (a *Activities) Lapse(ctx context.Context, in booking.LapseInput) (booking.LookupOutput, error) {
	d, err := a.Store.Lapse(ctx, in.RequestKey, in.Intent, in.PolicyVersion)
	if err != nil {
		return booking.LookupOutput{}, storeError("lapse", in.RequestKey, err)
	}
	return a.reads().Output(ctx, d), nil
}

// Confirm turns the key's hold into a booking; an expired hold is refused.
func (a *Activities) Confirm(ctx context.Context, in booking.ConfirmInput) (out booking.CommitOutput, err error) {
	defer a.turns.begin()()
	defer a.countCommit(ctx, time.Now(), &out, &err)
	return a.confirm(ctx, in)
}

func (a *Activities) confirm(ctx context.Context, in booking.ConfirmInput) (booking.CommitOutput, error) {
	b, err := a.Store.Confirm(ctx, store.ConfirmRequest{RequestKey: in.RequestKey, Contact: in.Contact})
	if err != nil {
		return booking.CommitOutput{}, storeError("confirm", in.RequestKey, err)
	}
	if b.Status != booking.StatusConfirmed {
		return booking.CommitOutput{}, rejectedError(booking.Rejectf(booking.CodeHoldExpired, "the hold on this slot is %s", b.Status))
	}
	return booking.CommitOutput{Booking: b}, nil
}

// ExpireHold expires the key's hold if it is past its time.
func (a *Activities) ExpireHold(ctx context.Context, in booking.KeyInput) (booking.LookupOutput, error) {
	b, err := a.Store.ExpireHold(ctx, in.RequestKey)
	if err != nil {
		return booking.LookupOutput{}, storeError("expire hold", in.RequestKey, err)
	}
	return booking.LookupOutput{Found: true, Booking: b}, nil
}

// Release frees the booking's capacity; releasing twice is harmless.
func (a *Activities) Release(ctx context.Context, in booking.ReleaseInput) (booking.LookupOutput, error) {
	defer a.turns.begin()() // a cancel's caller waits on it
	b, err := a.Store.Release(ctx, store.ReleaseRequest{RequestKey: in.RequestKey})
	if errors.Is(err, booking.ErrNotFound) && in.Booking != nil {
		return a.releaseLost(ctx, *in.Booking)
	}
	if errors.Is(err, booking.ErrNotFound) {
		return booking.LookupOutput{}, nil
	}
	if err != nil {
		return booking.LookupOutput{}, storeError("release", in.RequestKey, err)
	}
	return booking.LookupOutput{Found: true, Booking: b}, nil
}

// releaseLost cancels a booking the store lost: it records it cancelled,
// which is what the caller asked, and answers the store's decision on the
// key (a key it refused stays refused).
func (a *Activities) releaseLost(ctx context.Context, b booking.Booking) (booking.LookupOutput, error) {
	if _, err := a.Store.RecordRelease(ctx, b, booking.StatusCancelled, ""); err != nil {
		return booking.LookupOutput{}, storeError("release", b.RequestKey, err)
	}
	out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: b.RequestKey})
	if err != nil || out.Refusal != nil {
		return booking.LookupOutput{}, err
	}
	return out, nil
}
