package workflows

import (
	"bytes"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// validateCommit refuses malformed requests before they enter history, as
// the typed refusal callers match on.
func validateCommit(req booking.CommitRequest) error {
	if req.Intent.Replaces != "" {
		// Only a reschedule of the old booking's own saga may name it.
		return typedRefusal(booking.Rejectf(booking.CodeInvalidReplacement, "replaces is set by the reschedule update, not by a commit"))
	}
	err := req.Intent.Validate()
	if err == nil && req.ExpectedPolicyVersion == "" {
		err = booking.Rejectf(booking.CodeMissingField, "expected_policy_version is required")
	}
	return typedRefusal(err)
}

func typedRefusal(err error) error {
	var rej *booking.Rejection
	if errors.As(err, &rej) {
		return temporal.NewNonRetryableApplicationError(rej.Error(), booking.ErrTypeRejected, nil, *rej)
	}
	return err
}

// selectSlot records the caller's choice and, if asked, places a hold.
func (s *saga) selectSlot(ctx workflow.Context, req booking.CommitRequest) (receipt.Receipt, error) {
	if r, reused := s.sameIntent(req); reused {
		return r, nil
	}
	if s.st.State == StateOffered {
		s.st.Request = &req
		if !req.Hold {
			s.setState(ctx, StateSelected)
			return s.receipt(), nil
		}
		s.startCommit(ctx)
	}
	return s.awaitOutcome(ctx, s.set.CommitWait, func() bool { return !s.commitRunning })
}

// commit books the intent. Duplicates (retries, a barge-in re-issue, the
// concurrent copies of one tool call) all wait on the same run and get the
// same receipt. After CommitWait the answer is pending_reconciliation with
// a reference; the saga keeps going and a later call reads the outcome.
func (s *saga) commit(ctx workflow.Context, req booking.CommitRequest) (receipt.Receipt, error) {
	if r, reused := s.sameIntent(req); reused {
		return r, nil
	}
	start := workflow.Now(ctx)
	// A hold still being placed lands first; the runner then confirms it
	// because a commit is wanted, however long the hold took.
	s.commitWanted = true
	s.takeContact(req)
	if !s.commitRunning && (s.st.State == StateOffered || s.st.State == StateSelected) {
		// This call starts the attempt, whose own timeout is CommitWait: it
		// waits for that attempt without a timer of its own.
		first := s.attemptsDone + 1
		if s.st.Request == nil {
			s.st.Request = &req
		}
		// A commit after a select brings its own policy version.
		s.st.Request.ExpectedPolicyVersion = req.ExpectedPolicyVersion
		s.st.Request.Hold = false
		s.startCommit(ctx)
		if err := workflow.Await(ctx, func() bool { return s.st.State.decided() || s.attemptsDone >= first }); err != nil {
			return receipt.Receipt{}, err
		}
		if s.st.State.decided() {
			return s.receipt(), nil
		}
	}
	left := s.set.CommitWait - workflow.Now(ctx).Sub(start)
	return s.awaitOutcome(ctx, left, func() bool { return s.st.State.decided() })
}

func (s *saga) awaitOutcome(ctx workflow.Context, wait time.Duration, cond func() bool) (receipt.Receipt, error) {
	if wait > 0 {
		if _, err := awaitUntil(ctx, wait, s.named("answer pending_reconciliation if undecided"), cond); err != nil {
			return receipt.Receipt{}, err
		}
	}
	return s.receipt(), nil
}

// sameIntent refuses a request that reuses this key for another intent.
// The saga's state does not change: the key still means its first intent.
func (s *saga) sameIntent(req booking.CommitRequest) (receipt.Receipt, bool) {
	if s.st.Request == nil {
		return receipt.Receipt{}, false
	}
	// A reschedule's new booking carries the key it replaces; the agent,
	// sending the same slot again under the new key, does not.
	asked := req.Intent
	asked.Replaces = s.st.Request.Intent.Replaces
	if bytes.Equal(s.st.Request.Intent.Fingerprint(), asked.Fingerprint()) {
		return receipt.Receipt{}, false
	}
	r := s.receipt()
	r.Status = receipt.StatusRejected
	r.Reason = &receipt.Reason{Code: string(booking.CodeRequestKeyReused),
		Message: "this request_key was used for another intent; create a new key for a new choice"}
	return r, true
}

// takeContact keeps the contact a commit after a select brings, also when
// it arrives while the hold is still being placed: the confirm carries it.
func (s *saga) takeContact(req booking.CommitRequest) {
	if req.Contact == nil || s.st.State.decided() {
		return
	}
	if s.st.Request == nil {
		s.st.Request = &req
	}
	s.st.Request.Contact = req.Contact
}

func (s *saga) startCommit(ctx workflow.Context) {
	s.commitRunning, s.nudged = true, false
	s.setState(ctx, StateCommitting)
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() { s.commitRunning = false }()
		s.runCommit(ctx)
	})
}

// runCommit drives the commit to a known outcome. A technical failure makes
// the outcome UNKNOWN: the store is asked, and only when it authoritatively
// has no booking is the commit sent again, with the same key and the same
// intent. No new key and no other time, ever.
func (s *saga) runCommit(ctx workflow.Context) {
	backoff := time.Second
	for {
		confirming := s.st.Held
		s.st.CommitAttempts++
		var out booking.CommitOutput
		var err error
		cctx := commitCtx(ctx, s.set.CommitWait)
		if confirming {
			err = s.localActivity(cctx, booking.ActivityConfirm, s.confirmInput()).Get(ctx, &out)
		} else {
			err = s.localActivity(cctx, booking.ActivityCommit, s.commitInput()).Get(ctx, &out)
		}
		s.attemptsDone++
		if s.st.State.decided() {
			return // settled by a reconciliation while the attempt ran: a late answer never overwrites it
		}
		if err == nil {
			s.fromStore(ctx, out.Booking)
			if s.st.Held && s.commitWanted {
				continue // a commit came while the hold was being placed
			}
			return
		}
		if s.refused(ctx, err) {
			return
		}
		s.enterUnknown(ctx, err)
		found, ok := s.lookup(ctx)
		if !ok || s.st.State.decided() {
			return // the workflow was cancelled, or a reconciliation settled it
		}
		if found.Found && !(confirming && found.Booking.Status == booking.StatusHeld) {
			s.adopt(ctx, found)
			if s.st.Held && s.commitWanted {
				continue
			}
			return
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return // still UNKNOWN: the next run restarts the commit with a short history
		}
		// Authoritatively absent (or a hold still to confirm): same key
		// again, after a backoff a reconciliation run may cut short.
		if _, err := awaitUntil(ctx, backoff, s.named("look up the outcome again"), func() bool { return s.nudged || s.st.State.decided() }); err != nil {
			return
		}
		s.nudged = false
		if s.st.State.decided() {
			return
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// lookup asks the store about the key until it answers. A reconciliation
// signal cuts it short to ask again at once (before changeSignalIsNudge,
// with the signal's answer); ok is false only when the workflow itself is
// cancelled.
func (s *saga) lookup(ctx workflow.Context) (booking.LookupOutput, bool) {
	defer func() { s.cancelLookup = nil }()
	for {
		lctx, cancel := workflow.WithCancel(ctx)
		s.cancelLookup = cancel
		var found booking.LookupOutput
		err := s.activity(storeCtx(lctx), booking.ActivityLookup, s.key()).Get(lctx, &found)
		if err == nil {
			return found, true
		}
		if ctx.Err() != nil {
			return booking.LookupOutput{}, false
		}
		if !s.nudgeOnly || !temporal.IsCanceledError(err) {
			return s.reconciled, true
		}
	}
}

// nudge makes a stuck saga ask the store now: a lookup under way starts
// again, a runner waiting out its backoff sends the same key again (the
// store answers a key it has with its record), and a stopped runner
// restarts.
func (s *saga) nudge(ctx workflow.Context) {
	if !s.commitRunning {
		s.startCommit(ctx)
		return
	}
	s.nudged = true
	if s.cancelLookup != nil {
		s.cancelLookup()
	}
}

// disagrees reports a store record that says something else than state.
func disagrees(state State, out booking.LookupOutput) bool {
	if !out.Found {
		return false // nothing to adopt: the store decided nothing
	}
	st, _ := storeState(out)
	return st != state
}

func (s *saga) enterUnknown(ctx workflow.Context, err error) {
	if s.st.UnknownSince == nil {
		now := workflow.Now(ctx)
		s.st.UnknownSince = &now
	}
	s.log.Warn("commit outcome unknown; looking it up", "request_key", s.st.RequestKey, "error", err)
	s.setState(ctx, StateUnknown)
}

// rejection is the store's refusal that an activity's err carries, if it
// is one.
func rejection(err error) (booking.Rejection, bool) {
	var appErr *temporal.ApplicationError
	var rej booking.Rejection
	if !errors.As(err, &appErr) || appErr.Type() != booking.ErrTypeRejected {
		return rej, false
	}
	_ = appErr.Details(&rej)
	return rej, true
}

// refused maps a business outcome onto the saga; false means err was technical.
func (s *saga) refused(ctx workflow.Context, err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	switch appErr.Type() {
	case booking.ErrTypeConflict:
		var d booking.ConflictDetail
		_ = appErr.Details(&d)
		s.refuse(ctx, StateConflict, conflictReason(d.Busy))
	case booking.ErrTypeRejected:
		rej, _ := rejection(err)
		state := StateRejected
		switch {
		case rej.Code == booking.CodeHoldExpired || rej.Code == booking.CodeIntentExpired:
			state = StateExpired
		case rej.Code == booking.CodeCancelledBeforeBooked &&
			s.since(ctx, changeCancelBeforeBooked):
			state = StateCancelled
		}
		s.refuse(ctx, state, &receipt.Reason{Code: string(rej.Code), Message: rej.Message})
	default:
		return false
	}
	return true
}

func (s *saga) refuse(ctx workflow.Context, state State, reason *receipt.Reason) {
	s.st.Reason = reason
	s.st.Held = false
	s.setState(ctx, state)
	s.notifyReplaced(ctx)
}

// fromStore adopts what the store says about the key.
func (s *saga) fromStore(ctx workflow.Context, b booking.Booking) {
	held, before := s.st.Booking, s.st.State
	s.st.Booking = &b
	s.st.UnknownSince = nil
	s.st.Held = b.Status == booking.StatusHeld
	switch b.Status {
	case booking.StatusHeld:
		s.setState(ctx, StateSelected)
		return
	case booking.StatusConfirmed:
		s.setState(ctx, StateConfirmed)
	case booking.StatusCancelled:
		s.setState(ctx, StateCancelled)
	case booking.StatusExpired:
		s.setState(ctx, StateExpired)
	case booking.StatusReleasedForReschedule:
		s.st.ReplacedBy = b.ReplacedByRequestKey
		s.setState(ctx, StateRescheduled)
	}
	if s.mirrorsBehind(ctx, held, before) {
		s.dirty = true
	}
	if s.st.CancelRequested && b.Status == booking.StatusConfirmed {
		// The cancel runs first; the replaced booking then hears the final
		// outcome, and is not released for a booking that is going away.
		return
	}
	s.notifyReplaced(ctx)
}

// notifyReplaced tells the booking this one reschedules how it ended, once
// that is known; an unknown outcome is never reported.
func (s *saga) notifyReplaced(ctx workflow.Context) {
	req := s.st.Request
	if req == nil || req.Intent.Replaces == "" || !s.st.State.decided() || s.st.ReplacedNotified {
		return
	}
	s.st.ReplacedNotified = true
	r := s.receipt()
	// The saga must not close before the signal is delivered: the server
	// drops a signal whose sender has completed.
	s.notifying++
	defer func() { s.notifying-- }()
	if err := workflow.SignalExternalWorkflow(ctx, workflowID(ctx, s.since(ctx, changeAgencyIDs), req.Intent.Replaces), "", booking.SignalReplacement, r).Get(ctx, nil); err != nil {
		s.log.Error("could not tell the replaced booking", "request_key", s.st.RequestKey, "replaces", req.Intent.Replaces, "error", err)
	}
}

func (s *saga) key() booking.KeyInput { return booking.KeyInput{RequestKey: s.st.RequestKey} }

// confirmInput carries the contact the confirming book brought. The input
// of a local activity is not in the history, so no version guard is needed.
func (s *saga) confirmInput() booking.ConfirmInput {
	in := booking.ConfirmInput{RequestKey: s.st.RequestKey}
	if s.st.Request != nil {
		in.Contact = s.st.Request.Contact
	}
	return in
}

func (s *saga) commitInput() booking.CommitInput {
	req := *s.st.Request
	req.RequestKey = s.st.RequestKey
	return booking.CommitInput{CommitRequest: req, Attempt: s.st.CommitAttempts}
}
