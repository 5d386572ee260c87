package workflows

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/booking"
	"github.com/bookingsaga/bookingsaga/internal/receipt"
)

// cancel releases the booking in the store; the main loop then removes the
// calendar event and marks the CRM record. Cancelling twice returns the
// same receipt. A cancel that arrives while the outcome is unknown is
// remembered and carried out if the booking turns out confirmed.
func (s *saga) cancel(ctx workflow.Context, _ CancelRequest) (receipt.Receipt, error) {
	if err := s.mu.Lock(ctx); err != nil {
		return receipt.Receipt{}, err
	}
	defer s.mu.Unlock()
	switch {
	case s.st.State == StateOffered || s.st.State == StateSelected && !s.st.Held && !s.commitRunning:
		s.setState(ctx, StateCancelled) // nothing was booked
		return s.receipt(), nil
	case s.st.State == StateConfirmed || s.st.State == StateSelected && s.st.Held && !s.commitRunning:
		return s.release(ctx, "")
	case !s.st.State.decided():
		s.st.CancelRequested = true
		return s.awaitOutcome(ctx, s.set.CommitWait, func() bool { return s.st.State.decided() && s.st.State != StateConfirmed })
	}
	return s.receipt(), nil
}

func (s *saga) release(ctx workflow.Context, replacedBy string) (receipt.Receipt, error) {
	var a *activities.Activities
	var out activities.LookupOutput
	in := activities.ReleaseInput{RequestKey: s.st.RequestKey, ReplacedBy: replacedBy}
	if err := workflow.ExecuteActivity(storeCtx(ctx), a.Release, in).Get(ctx, &out); err != nil {
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
		return err
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
	if _, err := workflow.AwaitWithTimeout(ctx, s.set.CommitWait, func() bool { return s.replacement != nil }); err != nil {
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
		return &receipt.Reason{Code: string(booking.CodeRequestKeyReused), Message: "the new request_key is already in use"}
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
	workflow.Go(ctx, s.awaitReplacement)
	return nil
}

// awaitReplacement waits, as long as it takes, for the new saga's decided
// outcome, and only then releases this booking.
func (s *saga) awaitReplacement(ctx workflow.Context) {
	var r receipt.Receipt
	workflow.GetSignalChannel(ctx, SignalReplacement).Receive(ctx, &r)
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
		s.log.Error("replacement confirmed but the old booking was not released", "request_key", s.st.RequestKey, "reason", old.Reason.Code)
	}
	s.replacement, s.replacing = &r, ""
}
