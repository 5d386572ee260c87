package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

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
	if err := s.sleep(ctx, time.Millisecond, "publish the decision before the mirrors"); err != nil {
		// Cancelled: nothing was written; reconciliation catches up.
		s.st.CalendarSynced, s.st.CRMSynced, s.st.LastError = false, false, err.Error()
		return
	}
	began := workflow.Now(ctx)
	fctx := firstTryCtx(ctx, s.set.MirrorFirstTry)
	calF := s.localActivity(fctx, booking.ActivitySyncCalendar, s.key())
	crmF := s.localActivity(fctx, booking.ActivitySyncCRM, s.key())
	var cal, crm booking.SyncOutput
	calErr, crmErr := calF.Get(ctx, &cal), crmF.Get(ctx, &crm)
	if Retryable(calErr) || Retryable(crmErr) {
		s.mirrored(cal, calErr, crmErr)
		s.changes++
		s.publish(ctx)
		calF = s.retryMirror(ctx, calF, calErr, booking.ActivitySyncCalendar)
		crmF = s.retryMirror(ctx, crmF, crmErr, booking.ActivitySyncCRM)
		calErr, crmErr = calF.Get(ctx, &cal), crmF.Get(ctx, &crm)
	}
	s.mirrored(cal, calErr, crmErr)
	s.lag(ctx, began, "calendar", cal, calErr)
	s.lag(ctx, began, "crm", crm, crmErr)
}

// MirrorLagMetric is how long a mirror took to follow the saga's decision
// (retries included), by mirror; like every saga metric it goes through
// the SDK's handler, so it names its prefix.
const MirrorLagMetric = "bookingsaga_mirror_lag"

func (s *saga) lag(ctx workflow.Context, began time.Time, mirror string, out booking.SyncOutput, err error) {
	if !s.meta || err != nil || out.Skipped {
		return
	}
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"mirror": mirror}).Timer(MirrorLagMetric).
		Record(workflow.Now(ctx).Sub(began))
}

// retryMirror retries a mirror whose first try failed, as an activity
// under mirrorCtx, once the delay the service asked for (Retry-After) has
// passed; a first try that needs no retry is returned as it is.
func (s *saga) retryMirror(ctx workflow.Context, first workflow.Future, err error, mirror string) workflow.Future {
	if !Retryable(err) {
		return first
	}
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.NextRetryDelay() > 0 {
			if err := s.sleep(ctx, appErr.NextRetryDelay(), "wait for the service's Retry-After"); err != nil {
				set.SetError(err)
				return
			}
		}
		set.Chain(s.activity(mirrorCtx(ctx, s.set.MirrorAttemptTimeout), mirror, s.key()))
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

// mirrorsBehind says whether the store's record, just adopted over held in
// state before, has news for the mirrors. A record the saga held already
// has none: the final read of every booking (changeFinalRead) wrote both
// mirrors again until changeUnchangedRecord. A mirror that failed for good
// stays the reconciliation schedule's to repair, as it was before.
func (s *saga) mirrorsBehind(ctx workflow.Context, held *booking.Booking, before State) bool {
	if held == nil || s.st.State != before || !held.MirrorsAlike(*s.st.Booking) {
		return true
	}
	return !s.since(ctx, changeUnchangedRecord)
}

func (s *saga) synced() bool { return s.st.CalendarSynced && s.st.CRMSynced }

// Retryable says whether a failed activity is worth another try: any
// failure but one its activity marked final (a refusal, a business outcome).
func Retryable(err error) bool {
	var appErr *temporal.ApplicationError
	return err != nil && !(errors.As(err, &appErr) && appErr.NonRetryable())
}
