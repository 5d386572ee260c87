package workflows

import (
	"errors"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/booking"
	"github.com/bookingsaga/bookingsaga/internal/receipt"
)

// cancel releases the booking in the store; the main loop then removes the
// calendar event and marks the CRM record. Cancelling twice returns the
// same receipt. A cancel that arrives while the outcome is unknown, or
// while a hold is being placed, is remembered: the main loop carries it out
// once the booking is known, and the receipt says pending until then.
func (s *saga) cancel(ctx workflow.Context, _ CancelRequest) (receipt.Receipt, error) {
	if s.replacing != "" {
		r := s.receipt()
		r.Reason = &receipt.Reason{Code: string(booking.CodeWrongState),
			Message: "a reschedule to " + s.replacing + " is under way; cancel that booking once it is decided"}
		return r, nil
	}
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
		return s.release(ctx, "")
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
		_, _ = s.release(ctx, "")
		s.mu.Unlock()
	case s.st.State.decided():
		s.st.CancelRequested = false // nothing was booked
	}
}

func (s *saga) release(ctx workflow.Context, replacedBy string) (receipt.Receipt, error) {
	var a *activities.Activities
	var out activities.LookupOutput
	in := activities.ReleaseInput{RequestKey: s.st.RequestKey, ReplacedBy: replacedBy}
	err := workflow.ExecuteActivity(storeCtx(ctx), a.Release, in).Get(ctx, &out)
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
	if err := booking.ValidateReplacement(req.NewRequestKey, s.st.RequestKey); err != nil {
		return typedRefusal(err)
	}
	if err := booking.ValidateKey(req.NewRequestKey); err != nil {
		return typedRefusal(err)
	}
	return validateCommit(req.Commit)
}

// reschedule books the new intent first, as its own saga under its own key,
// and releases this booking only once the new one is confirmed. A conflict
// or refusal leaves this booking as it was; an unknown outcome releases
// nothing until it is known.
func (s *saga) reschedule(ctx workflow.Context, req RescheduleRequest) (receipt.Receipt, error) {
	pending := receipt.Receipt{RequestKey: req.NewRequestKey, Status: receipt.StatusPending,
		Reference: receipt.Reference(req.NewRequestKey), Replaces: s.st.RequestKey}
	if refusal := s.beginReschedule(ctx, req); refusal != nil {
		r := pending
		r.Status, r.Reference, r.Reason = receipt.StatusRejected, "", refusal
		return r, nil
	}
	if _, err := awaitUntil(ctx, s.set.CommitWait, func() bool { return s.replacement != nil }); err != nil {
		return receipt.Receipt{}, err
	}
	if s.replacement == nil {
		return pending, nil
	}
	return *s.replacement, nil
}

// beginReschedule starts the replacement saga, or joins the one under way
// for the same new key.
func (s *saga) beginReschedule(ctx workflow.Context, req RescheduleRequest) *receipt.Reason {
	if err := s.mu.Lock(ctx); err != nil {
		return rejectionReason(err)
	}
	defer s.mu.Unlock()
	switch {
	case s.replacing == req.NewRequestKey || s.replacement != nil && s.replacement.RequestKey == req.NewRequestKey:
		return nil
	case s.replacing != "" || s.st.State != StateConfirmed:
		return &receipt.Reason{Code: string(booking.CodeWrongState),
			Message: "only a confirmed booking with no other reschedule under way can be rescheduled; it is " + string(s.st.State)}
	}
	if err := s.startReplacement(ctx, req); err != nil {
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if errors.As(err, &started) {
			return &receipt.Reason{Code: string(booking.CodeRequestKeyReused), Message: "the new request_key is already in use"}
		}
		return &receipt.Reason{Code: string(booking.CodeWrongState), Message: "the new booking could not be started: " + err.Error(), Retryable: true}
	}
	return nil
}

func (s *saga) startReplacement(ctx workflow.Context, req RescheduleRequest) error {
	commit := req.Commit
	commit.Intent.Replaces = s.st.RequestKey
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: req.NewRequestKey,
		// The new booking outlives this one, which ends once released.
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, Booking, BookingInput{RequestKey: req.NewRequestKey, Commit: &commit, Settings: s.set})
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return err
	}
	s.replacing, s.replacement = req.NewRequestKey, nil
	workflow.Go(ctx, func(ctx workflow.Context) { s.awaitReplacement(ctx, child) })
	return nil
}

// awaitReplacement waits, as long as it takes, for the new saga's decided
// outcome (its signal, or its result if it closes first, failed included),
// and only a confirmed outcome releases this booking.
func (s *saga) awaitReplacement(ctx workflow.Context, child workflow.ChildWorkflowFuture) {
	r := s.replacementOutcome(ctx, child)
	if r.Status != receipt.StatusConfirmed {
		s.replacement, s.replacing = &r, ""
		return
	}
	r.Replaces = s.st.RequestKey
	if err := s.mu.Lock(ctx); err != nil {
		return
	}
	defer s.mu.Unlock()
	old, _ := s.release(ctx, r.RequestKey)
	if old.Reason != nil {
		// Said as it is: the old booking stands, so the move is not done.
		s.log.Error("replacement confirmed but the old booking was not released", "request_key", s.st.RequestKey, "reason", old.Reason.Code)
		r = receipt.Receipt{RequestKey: r.RequestKey, Status: receipt.StatusRejected, Replaces: s.st.RequestKey, Reason: old.Reason}
	}
	s.replacement, s.replacing = &r, ""
}

func (s *saga) replacementOutcome(ctx workflow.Context, child workflow.ChildWorkflowFuture) receipt.Receipt {
	signals := workflow.GetSignalChannel(ctx, SignalReplacement)
	for {
		var r receipt.Receipt
		decided := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &r)
			decided = r.RequestKey == s.replacing // a stray signal is not the answer
		})
		sel.AddFuture(child, func(f workflow.Future) {
			if err := f.Get(ctx, &r); err != nil {
				r = receipt.Receipt{RequestKey: s.replacing, Status: receipt.StatusRejected, Replaces: s.st.RequestKey,
					Reason: &receipt.Reason{Code: string(booking.CodeWrongState), Message: "the new booking's saga failed: " + err.Error()}}
			}
			decided = true
		})
		sel.Select(ctx)
		if decided {
			return r
		}
	}
}
