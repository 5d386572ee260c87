package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The store is where every decision on a key lives. This file maps its
// record onto the saga's states, for the saga itself (adopt) and for a
// caller whose saga is gone (StoreReceipt), so the two can't word it
// differently.

// storeState is the saga state the store's record of a key stands for,
// and the reason a refusal carries.
func storeState(out booking.LookupOutput) (State, *receipt.Reason) {
	if r := out.Refusal; r != nil {
		reason := &receipt.Reason{Code: string(r.Code), Message: r.Message}
		switch r.Outcome {
		case booking.RefusedConflict:
			return StateConflict, conflictReason(r.Busy)
		case booking.RefusedExpired:
			return StateExpired, reason
		case booking.RefusedWithdrawn:
			// Its caller cancelled before anything booked it (migration
			// 032): no build before knew the outcome, so no kept saga
			// meets this branch.
			return StateCancelled, reason
		}
		return StateRejected, reason
	}
	switch out.Booking.Status {
	case booking.StatusHeld:
		return StateSelected, nil
	case booking.StatusConfirmed:
		return StateConfirmed, nil
	case booking.StatusCancelled:
		return StateCancelled, nil
	case booking.StatusExpired:
		return StateExpired, nil
	case booking.StatusReleasedForReschedule:
		return StateRescheduled, nil
	}
	return StateUnknown, nil
}

// StoreReceipt is the receipt for key built from the store's record alone,
// worded as the saga words it; ok is false when the store decided nothing.
func StoreReceipt(key string, out booking.LookupOutput) (r receipt.Receipt, ok bool) {
	if !out.Found {
		return receipt.Receipt{}, false
	}
	st := BookingState{RequestKey: key}
	st.State, st.Reason = storeState(out)
	if ref := out.Refusal; ref != nil {
		st.Request = &booking.CommitRequest{Intent: ref.Intent, ExpectedPolicyVersion: ref.PolicyVersion}
	} else {
		b := out.Booking
		st.Booking, st.Held, st.ReplacedBy = &b, b.Status == booking.StatusHeld, b.ReplacedByRequestKey
	}
	s := &saga{st: st}
	return s.receipt(), true
}

// adopt takes the store's record of this key over the saga's own state.
// When the saga had decided otherwise, that is drift: the store's answer
// is kept, logged and counted, so that no answer contradicts the store.
// expected names the states the saga's own request leads to (a
// reschedule's release, say), which are not drift.
func (s *saga) adopt(ctx workflow.Context, out booking.LookupOutput, expected ...State) {
	if !out.Found {
		return // nothing decided: the commit runner handles that
	}
	before := s.st.State
	s.adopting = true
	defer func() { s.adopting = false }()
	switch {
	case out.Refusal != nil:
		state, reason := storeState(out)
		s.refuse(ctx, state, reason)
	default:
		s.fromStore(ctx, out.Booking)
	}
	if before.decided() && s.st.State != before && !slices.Contains(expected, s.st.State) {
		s.log.Warn("the saga's answer disagreed with the store; the store's is kept",
			"request_key", s.st.RequestKey, "saga", before, "store", s.st.State)
		workflow.GetMetricsHandler(ctx).Counter(SagaDriftMetric).Inc(1)
	}
}

// onReconcile takes a reconciliation run's lookup. For a stuck saga, found
// settles it at once and absent makes the runner send the same key again
// now. A decided saga whose answer the store contradicts adopts the
// store's.
func (s *saga) onReconcile(ctx workflow.Context, out booking.LookupOutput) {
	if s.lostCommitPossible() {
		if err := s.mu.Lock(ctx); err == nil {
			s.lostCommitRead(ctx)
			s.mu.Unlock()
		}
		return
	}
	if s.st.State != StateUnknown && s.st.State != StateCommitting {
		if s.st.State.decided() && !s.commitRunning && disagrees(s.st.State, out) {
			// The run's lookup may be older than the saga's own last step:
			// read the store afresh before taking its word.
			if err := s.mu.Lock(ctx); err == nil {
				s.refresh(ctx)
				s.mu.Unlock()
			}
		}
		return
	}
	if s.nudgeOnly || s.since(ctx, changeSignalIsNudge) {
		s.nudgeOnly = true
		s.nudge(ctx)
		return
	}
	s.reconciled = out
	switch {
	case out.Found && out.Booking.Status != booking.StatusHeld:
		s.adopt(ctx, out)
	case !s.commitRunning:
		s.startCommit(ctx) // the runner had stopped (continue-as-new pending): same key again
	default:
		s.nudged = true
	}
	if s.cancelLookup != nil {
		s.cancelLookup()
	}
}

// lostCommitPossible: the saga is offered and holds no request, as one
// whose first update a Temporal server lost is left, and no commit runs.
func (s *saga) lostCommitPossible() bool {
	return s.st.State == StateOffered && s.st.Request == nil && !s.commitRunning
}

// lostCommitRead asks the store whether a commit the saga never saw
// booked its key: Temporal keeps an admitted update in memory until a
// worker accepts it, so a server that dies then loses it, and the commit
// its local activity already made stays in the store. The saga adopts
// what the store holds and reports true; an authoritative absence leaves
// it offered.
func (s *saga) lostCommitRead(ctx workflow.Context) bool {
	if !s.lostCommitPossible() || !s.since(ctx, changeReadLostCommit) {
		return false
	}
	var out booking.LookupOutput
	if err := s.activity(storeCtx(ctx), booking.ActivityLookup, s.key()).Get(ctx, &out); err != nil {
		return false // only when the workflow is cancelled: storeCtx retries
	}
	if !out.Found || !s.lostCommitPossible() {
		return false // nothing booked, or a request arrived meanwhile and decides
	}
	s.log.Info("the store holds a decision this saga never saw; the store's is kept", "request_key", s.st.RequestKey)
	s.adopt(ctx, out)
	return true
}

// refresh reads this key's record in the store and adopts it.
func (s *saga) refresh(ctx workflow.Context, expected ...State) {
	var out booking.LookupOutput
	if err := s.activity(storeCtx(ctx), booking.ActivityLookup, s.key()).Get(ctx, &out); err != nil {
		return // only when the workflow is cancelled: storeCtx retries
	}
	s.adopt(ctx, out, expected...)
}

// SagaDriftMetric counts sagas that adopted the store's answer over their
// own; it goes through the SDK's metrics handler, so it names its prefix.
const SagaDriftMetric = "bookingsaga_saga_drift_total"
