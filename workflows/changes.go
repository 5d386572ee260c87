package workflows

import (
	"errors"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// cancel releases the booking in the store; the main loop then removes the
// calendar event and marks the CRM record. Cancelling twice returns the
// same receipt. A cancel that arrives while the outcome is unknown, or
// while a hold is being placed, is remembered: the main loop carries it out
// once the booking is known, and the receipt says pending until then.
//
// A cancel that meets a reschedule under way is not refused: the store
// decides between them under the booking's row lock. Either the cancel
// comes first (the booking is cancelled, the move refused), or the move
// does (the booking reads rescheduled, and so does every resend of the
// cancel).
func (s *saga) cancel(ctx workflow.Context, _ CancelRequest) (receipt.Receipt, error) {
	if err := s.mu.Lock(ctx); err != nil {
		return receipt.Receipt{}, err
	}
	switch {
	case s.st.State == StateOffered || s.st.State == StateSelected && !s.st.Held && !s.commitRunning:
		s.setState(ctx, StateCancelled) // nothing was booked
		s.mu.Unlock()
		return s.receipt(), nil
	case s.st.State == StateConfirmed || s.st.State == StateSelected && s.st.Held && !s.commitRunning:
		defer s.mu.Unlock()
		return s.release(ctx)
	case !s.st.State.decided() || s.commitRunning:
		s.st.CancelRequested = true
		s.changes++ // wake the main loop
	}
	s.mu.Unlock()
	// Wait, without the lock, for the main loop to settle it.
	return s.awaitOutcome(ctx, s.set.CommitWait, func() bool { return !s.st.CancelRequested })
}

// cancelPending carries out a remembered cancel once there is something
// to release; it runs from the main loop.
func (s *saga) cancelPending(ctx workflow.Context) {
	if !s.st.CancelRequested || s.commitRunning {
		return
	}
	switch {
	case s.st.State == StateConfirmed || s.st.State == StateSelected && s.st.Held:
		if err := s.mu.Lock(ctx); err != nil {
			return
		}
		_, _ = s.release(ctx)
		s.mu.Unlock()
	case s.st.State.decided():
		s.st.CancelRequested = false // nothing was booked
	}
}

func (s *saga) release(ctx workflow.Context) (receipt.Receipt, error) {
	var out booking.LookupOutput
	in := booking.ReleaseInput{RequestKey: s.st.RequestKey}
	if s.since(ctx, changeCancelLost) {
		in.Booking = s.st.Booking
	}
	err := s.activity(storeCtx(ctx), booking.ActivityRelease, in).Get(ctx, &out)
	if err == nil && !out.Found {
		err = booking.Rejectf(booking.CodeNotBooked, "the store has no booking under this key")
	}
	if err != nil {
		r := s.receipt()
		r.Reason = rejectionReason(err)
		return r, nil
	}
	s.st.CancelRequested = false
	s.fromStore(ctx, out.Booking)
	return s.receipt(), nil
}

func (s *saga) validateReschedule(req RescheduleRequest) error {
	if _, known := s.st.Replacements[req.NewRequestKey]; known {
		return nil // a resend: it gets the first send's answer
	}
	if err := booking.ValidateReplacement(req.NewRequestKey, s.st.RequestKey); err != nil {
		return typedRefusal(err)
	}
	if err := booking.ValidateKey(req.NewRequestKey); err != nil {
		return typedRefusal(err)
	}
	return validateCommit(req.Commit)
}

// reschedule books the new intent first, as its own saga under its own
// key, which releases this booking in the same store transaction once it
// is confirmed. Nothing is refused here: the store decides, under the new
// key, whether this booking can still be moved (two moves or a cancel at
// once are decided one after the other), and records that decision, so
// every resend of the same request gets the same answer.
func (s *saga) reschedule(ctx workflow.Context, req RescheduleRequest) (receipt.Receipt, error) {
	key := req.NewRequestKey
	pending := receipt.Receipt{RequestKey: key, Status: receipt.StatusPending,
		Reference: receipt.Reference(key), Replaces: s.st.RequestKey}
	if _, known := s.st.Replacements[key]; !known {
		if refusal := s.startReplacement(ctx, req); refusal != nil {
			r := pending
			r.Status, r.Reference, r.Reason = receipt.StatusRejected, "", refusal
			return r, nil
		}
	}
	if _, err := awaitUntil(ctx, s.set.CommitWait, s.named("wait for the new booking's answer"), func() bool { return s.st.Replacements[key] != nil }); err != nil {
		return receipt.Receipt{}, err
	}
	if r := s.st.Replacements[key]; r != nil {
		return *r, nil
	}
	return pending, nil
}

// startReplacement starts the new booking's saga as a child.
func (s *saga) startReplacement(ctx workflow.Context, req RescheduleRequest) *receipt.Reason {
	commit := req.Commit
	commit.Intent.Replaces = s.st.RequestKey
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: workflowID(ctx, s.since(ctx, changeAgencyIDs), req.NewRequestKey),
		// The new booking outlives this one, which ends once released.
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:         s.named(Summary(req.NewRequestKey, commit.Intent)),
		TypedSearchAttributes: childAttributes(ctx, s.since(ctx, changeAgencyIDs)),
	})
	if s.st.Replacements == nil {
		s.st.Replacements = map[string]*receipt.Receipt{}
	}
	s.st.Replacements[req.NewRequestKey] = nil
	s.inFlight++
	child := workflow.ExecuteChildWorkflow(cctx, Booking, BookingInput{RequestKey: req.NewRequestKey, Commit: &commit, Settings: s.set})
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		delete(s.st.Replacements, req.NewRequestKey)
		s.inFlight--
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if errors.As(err, &started) {
			return &receipt.Reason{Code: string(booking.CodeRequestKeyReused), Message: "the new request_key is already in use"}
		}
		return &receipt.Reason{Code: string(booking.CodeWrongState), Message: "the new booking could not be started: " + err.Error(), Retryable: true}
	}
	workflow.Go(ctx, func(ctx workflow.Context) { s.awaitReplacement(ctx, req.NewRequestKey, child) })
	return nil
}

// replacementDecided takes a new booking's decided receipt, signalled by
// its saga; a signal for a key this booking did not start is ignored.
func (s *saga) replacementDecided(r receipt.Receipt) {
	if prev, ok := s.st.Replacements[r.RequestKey]; ok && prev == nil {
		if s.signalled == nil {
			s.signalled = map[string]*receipt.Receipt{}
		}
		s.signalled[r.RequestKey] = &r
	}
}

// awaitReplacement waits, as long as it takes, for the new saga's decided
// outcome (its signal, or its result if it closes first, failed
// included). Whatever it is, this booking then reads its own record in the
// store: the new booking's commit released it there if it was confirmed,
// and a new booking cancelled afterwards leaves it released.
func (s *saga) awaitReplacement(ctx workflow.Context, key string, child workflow.ChildWorkflowFuture) {
	defer func() { s.inFlight-- }()
	if err := workflow.Await(ctx, func() bool { return s.signalled[key] != nil || child.IsReady() }); err != nil {
		return
	}
	r := s.signalled[key]
	if r == nil {
		r = &receipt.Receipt{}
		if err := child.Get(ctx, r); err != nil {
			r = &receipt.Receipt{RequestKey: key, Status: receipt.StatusRejected, Replaces: s.st.RequestKey,
				Reason: &receipt.Reason{Code: string(booking.CodeWrongState), Message: "the new booking's saga failed: " + err.Error()}}
		}
	}
	if err := s.mu.Lock(ctx); err != nil {
		return
	}
	defer s.mu.Unlock()
	s.refresh(ctx, StateRescheduled)
	s.st.Replacements[key] = r
	delete(s.signalled, key)
}
