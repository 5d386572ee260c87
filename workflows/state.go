package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// commitCtx runs one commit attempt as a local activity: it runs in the
// worker that holds the update, without a round trip through the task
// queue, which is most of a voice caller's wait. Its timeout is the
// caller's wait, so the attempt itself bounds it. It is not retried by
// Temporal: a failed attempt has an unknown outcome, and runCommit looks it
// up before sending the same key again.
func commitCtx(ctx workflow.Context, wait time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: wait,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// storeCtx runs lookups and releases until the store answers.
func storeCtx(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second},
	})
}

// mirrorCtx retries a calendar or CRM write that failed its first try.
// They are copies: a failure is retried for an hour, then left to the
// reconciliation schedule, and never touches the booking.
func mirrorCtx(ctx workflow.Context, attempt time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    attempt,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 5 * time.Minute, NonRetryableErrorTypes: []string{booking.ErrTypeMirrorRefused}},
	})
}

// firstTryCtx runs a mirror's first try as a local activity, once: its
// retries are mirrorCtx's, with the workflow task released.
func firstTryCtx(ctx workflow.Context, limit time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: limit,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// sync mirrors the store's current state into the calendar and the CRM, in
// parallel. Both activities read the store, so a late sync is still right.
//
// The first try of each is a local activity, in a workflow task of its
// own: the timer ends the task that carries the commit's answer, so that
// answer never waits for a mirror. Written that way a mirror costs the
// engine a marker, not a task-queue round trip and a workflow task to
// report it; that was half a booking's engine work, and the caller's next
// call queued behind it (BENCHMARKS.md). The task is held while they run,
// so an update or query that arrives then waits for them, MirrorFirstTry
// at most. A mirror that fails its first try for a reason worth retrying
// is retried as an activity, with the workflow free (after the service's
// Retry-After, when it gave one); the decision is published first, not
// behind the retries.
func (s *saga) sync(ctx workflow.Context) {
	s.dirty = false
	defer func() { s.changes++ }() // the sync flags are search attributes too
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		// Cancelled: nothing was written; reconciliation catches up.
		s.st.CalendarSynced, s.st.CRMSynced, s.st.LastError = false, false, err.Error()
		return
	}
	fctx := firstTryCtx(ctx, s.set.MirrorFirstTry)
	calF := workflow.ExecuteLocalActivity(fctx, booking.ActivitySyncCalendar, s.key())
	crmF := workflow.ExecuteLocalActivity(fctx, booking.ActivitySyncCRM, s.key())
	var cal, crm booking.SyncOutput
	calErr, crmErr := calF.Get(ctx, &cal), crmF.Get(ctx, &crm)
	if booking.Retryable(calErr) || booking.Retryable(crmErr) {
		s.mirrored(cal, calErr, crmErr)
		s.changes++
		s.publish(ctx)
		calF = s.retryMirror(ctx, calF, calErr, booking.ActivitySyncCalendar)
		crmF = s.retryMirror(ctx, crmF, crmErr, booking.ActivitySyncCRM)
		calErr, crmErr = calF.Get(ctx, &cal), crmF.Get(ctx, &crm)
	}
	s.mirrored(cal, calErr, crmErr)
}

// retryMirror retries a mirror whose first try failed, as an activity
// under mirrorCtx, once the delay the service asked for (Retry-After) has
// passed; a first try that needs no retry is returned as it is.
func (s *saga) retryMirror(ctx workflow.Context, first workflow.Future, err error, mirror string) workflow.Future {
	if !booking.Retryable(err) {
		return first
	}
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.NextRetryDelay() > 0 {
			if err := workflow.Sleep(ctx, appErr.NextRetryDelay()); err != nil {
				set.SetError(err)
				return
			}
		}
		set.Chain(workflow.ExecuteActivity(mirrorCtx(ctx, s.set.MirrorAttemptTimeout), mirror, s.key()))
	})
	return f
}

// mirrored records the mirrors' outcome in the saga's state.
func (s *saga) mirrored(cal booking.SyncOutput, calErr, crmErr error) {
	s.st.CalendarSynced, s.st.CRMSynced, s.st.LastError = calErr == nil, crmErr == nil, ""
	for _, err := range []error{calErr, crmErr} {
		if err != nil {
			s.st.LastError = err.Error()
			s.log.Error("mirror write failed; the booking stands, reconciliation will retry",
				"request_key", s.st.RequestKey, "error", err)
		}
	}
	if b := s.st.Booking; b != nil && cal.EventID != "" {
		b.ProviderEventID = cal.EventID
	}
}

func (s *saga) synced() bool { return s.st.CalendarSynced && s.st.CRMSynced }

// setState is the only place the saga's state changes. It refuses a move
// the transition table (doc.go) does not allow, unless the saga is
// adopting the store's record, which may move a decided saga anywhere the
// store says: the store decides, and the saga follows.
func (s *saga) setState(ctx workflow.Context, st State) bool {
	if s.st.State == st {
		return true
	}
	if !s.adopting && !canMove(s.st.State, st) {
		s.log.Error("illegal booking state change refused", "request_key", s.st.RequestKey, "from", s.st.State, "to", st)
		return false
	}
	s.log.Info("booking state", "request_key", s.st.RequestKey, "from", s.st.State, "to", st)
	s.st.State = st
	s.changes++ // the main loop publishes the search attributes
	if st.decided() && s.st.Request != nil {
		// Contact details went to the store with the commit; the saga
		// does not keep them once no retry can need them.
		s.st.Request.Contact = nil
	}
	return true
}

// publish keeps the search attributes in step, so the Temporal UI can list
// e.g. everything UNKNOWN, or not synced to the calendar. A commit under
// way is not published: within CommitWait it is decided or UNKNOWN, and
// writing COMMITTING first would cost every booking a visibility write
// for a state that usually lasts milliseconds.
func (s *saga) publish(ctx workflow.Context) {
	if s.st.State == StateCommitting {
		return
	}
	s.published = s.changes
	updates := []temporal.SearchAttributeUpdate{
		AttrStatus.ValueSet(string(s.st.State)),
		AttrReference.ValueSet(receipt.Reference(s.st.RequestKey)),
		AttrCalendarSynced.ValueSet(s.st.CalendarSynced),
		AttrCRMSynced.ValueSet(s.st.CRMSynced),
	}
	if in := s.intent(); in != nil {
		updates = append(updates, AttrProperty.ValueSet(in.PropertyID), AttrAgent.ValueSet(in.AgentID),
			AttrSlotStart.ValueSet(in.StartsAt))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		s.log.Warn("search attributes not updated", "error", err)
	}
}

func (s *saga) intent() *booking.Intent {
	if s.st.Booking != nil {
		return &s.st.Booking.Intent
	}
	if s.st.Request != nil {
		return &s.st.Request.Intent
	}
	return nil
}

// receiptStatus is what the agent is told for a saga state.
func (st State) receiptStatus() receipt.Status {
	switch st {
	case StateCommitting, StateUnknown:
		return receipt.StatusPending
	case StateConfirmed:
		return receipt.StatusConfirmed
	case StateConflict:
		return receipt.StatusConflict
	case StateRejected:
		return receipt.StatusRejected
	case StateCancelled:
		return receipt.StatusCancelled
	case StateExpired:
		return receipt.StatusExpired
	case StateRescheduled:
		return receipt.StatusRescheduled
	}
	return receipt.StatusOffered
}

// receipt renders the saga's state for the agent.
func (s *saga) receipt() receipt.Receipt {
	r := receipt.Receipt{RequestKey: s.st.RequestKey, Status: s.st.State.receiptStatus(), Reason: s.st.Reason,
		ReplacedBy: s.st.ReplacedBy}
	if s.st.State == StateSelected && s.st.Held {
		r.Status = receipt.StatusHeld
	}
	if r.Status == receipt.StatusPending {
		r.Reference = receipt.Reference(s.st.RequestKey)
	}
	if in := s.intent(); in != nil {
		start, end := in.StartsAt, in.EndsAt
		r.PropertyRef, r.AgentRef, r.StartsAt, r.EndsAt, r.TimeZone = in.PropertyID, in.AgentID, &start, &end, in.TimeZone
		r.Replaces = in.Replaces
		if loc, err := localtime.LoadZone(in.TimeZone); err == nil {
			r.LocalStart = localtime.Render(start, loc)
		}
	}
	if s.st.Request != nil {
		r.PolicyVersion = s.st.Request.ExpectedPolicyVersion
	}
	if b := s.st.Booking; b != nil {
		r.BookingID, r.ProviderEventID, r.PolicyVersion = b.BookingID.String(), b.ProviderEventID, b.PolicyVersion
		r.CommittedAt, r.HoldExpiresAt = b.CommittedAt, b.HoldExpiresAt
		if !b.Status.Live() {
			r.HoldExpiresAt = nil
		}
	}
	return r
}

// awaitUntil waits until cond holds or d has passed, and reports whether
// cond holds. Its timer is cancelled as soon as cond holds: when that
// happens within the same workflow task (a commit decided inside the task
// that received it) no timer reaches history at all, and no stray timer
// fires a workflow task later.
func awaitUntil(ctx workflow.Context, d time.Duration, cond func() bool) (bool, error) {
	if cond() {
		return true, nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, d)
	if err := workflow.Await(ctx, func() bool { return cond() || timer.IsReady() }); err != nil {
		return false, err
	}
	return cond(), nil
}
