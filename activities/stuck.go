package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// Sagas whose answer needs the store's: stuck in UNKNOWN, or contradicted.

// ReconcileStuck looks up each saga stuck in UNKNOWN (the search
// attributes never show COMMITTING: it lasts at most the commit wait) and
// tells it what the store says: found settles it, absent makes it send the
// same key again now. Then it compares every open saga's answer with the
// store. An attempt goes on from the page the last one heartbeated
// (booking.StuckProgress).
func (a *Activities) ReconcileStuck(ctx context.Context, in booking.StuckInput) (booking.StuckReport, error) {
	var prog booking.StuckProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prog); err != nil {
			prog = booking.StuckProgress{} // unreadable: from the start, which only repeats what is idempotent
		}
	}
	if a.Temporal == nil {
		return prog.Report, nil
	}
	rep := &prog.Report
	err := a.everyPage(ctx, &prog, booking.StuckPhaseStuck, visibility.StuckQuery(agency.From(ctx), in.TaskQueue, in.Before), in.Limit, func(page []*workflowpb.WorkflowExecutionInfo) error {
		for _, ex := range page {
			if err := a.tellStuck(ctx, keyOf(ctx, ex), in.Before, rep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return *rep, fmt.Errorf("reconcile stuck: %w", err)
	}
	if err := a.verifyOpen(ctx, in, &prog); err != nil {
		return *rep, err
	}
	if err := a.verifyReleased(ctx, in, &prog); err != nil {
		return *rep, err
	}
	if err := a.settlePending(ctx, in, &prog); err != nil {
		return *rep, err
	}
	if err := a.settleMessages(ctx, in, &prog); err != nil {
		return *rep, err
	}
	// Counted once, by the attempt that finishes: one that dies counts
	// nothing, and the next counts what both found.
	a.drift(ctx, "stuck_commit", "repaired", rep.Found+rep.Absent)
	a.drift(ctx, "pending_call", "resent", rep.Resent)
	a.drift(ctx, "caller_message", "queued", rep.MessagesQueued)
	a.drift(ctx, "caller_message", "overdue", rep.MessagesOverdue)
	a.drift(ctx, "saga_answer", "told", rep.Drifted)
	a.drift(ctx, "store_lost_booking", "flagged", rep.Lost)
	a.drift(ctx, "store_lost_change", "flagged", rep.LostChanges)
	a.drift(ctx, "store_lost_release", "recorded", rep.ReleasesRecorded)
	return *rep, nil
}

// everyPage runs fn on each page of the executions query matches, to the
// last, as pass phase of prog: a large deployment's later sagas are
// compared too, each page with one store read. A pass prog has finished
// is skipped; the one under way resumes at its token. Each page done is
// heartbeated.
func (a *Activities) everyPage(ctx context.Context, prog *booking.StuckProgress, phase int, query string, size int, fn func([]*workflowpb.WorkflowExecutionInfo) error) error {
	if prog.Phase > phase {
		return nil
	}
	if prog.Phase < phase {
		prog.Phase, prog.Token = phase, nil
	}
	for {
		res, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(size),
			NextPageToken: prog.Token})
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		if err := fn(res.GetExecutions()); err != nil {
			return err
		}
		prog.Token = res.GetNextPageToken()
		last := len(prog.Token) == 0
		if last {
			prog.Phase++
		}
		activity.RecordHeartbeat(ctx, *prog)
		if last {
			return nil
		}
	}
}

// tellStuck nudges a saga stuck in UNKNOWN to read the store again.
func (a *Activities) tellStuck(ctx context.Context, key string, before time.Time, rep *booking.StuckReport) error {
	if !a.unknownSince(ctx, key, before) {
		return nil // in flight, not stuck: its outcome has not been unknown for long
	}
	out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: key})
	if err != nil {
		return err
	}
	err = a.Temporal.SignalWorkflow(ctx, agency.Scoped(ctx, key), "", booking.SignalReconcile, out)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil // it closed meanwhile: settled
	}
	if err != nil {
		return fmt.Errorf("signal %s: %w", key, err)
	}
	switch {
	case out.Refusal != nil:
		rep.Found++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("stuck saga %s: the store refused it (%s)", key, out.Refusal.Code))
	case out.Found:
		rep.Found++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("stuck saga %s: the store has it (%s)", key, out.Booking.Status))
	default:
		rep.Absent++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("stuck saga %s: absent from the store, committing again with the same key", key))
	}
	return nil
}

// statusesOf reads, in one query, what the store holds for each saga of
// a page: the page's keys, and their stored statuses.
func (a *Activities) statusesOf(ctx context.Context, page []*workflowpb.WorkflowExecutionInfo, op string) ([]string, map[string]booking.Status, error) {
	keys := make([]string, 0, len(page))
	for _, ex := range page {
		keys = append(keys, keyOf(ctx, ex))
	}
	stored, err := a.Store.Statuses(ctx, keys)
	if err != nil {
		return nil, nil, storeError(op, "", err)
	}
	return keys, stored, nil
}

// verifyOpen checks the answer each open booking saga publishes against
// the store, page by page with one read each, and tells a saga that
// disagrees what the store holds: it reads the store afresh and adopts
// the store's answer.
func (a *Activities) verifyOpen(ctx context.Context, in booking.StuckInput, prog *booking.StuckProgress) error {
	rep := &prog.Report
	err := a.everyPage(ctx, prog, booking.StuckPhaseOpen, visibility.LiveQuery(agency.From(ctx), in.TaskQueue), in.Limit, func(page []*workflowpb.WorkflowExecutionInfo) error {
		_, stored, err := a.statusesOf(ctx, page, "reconcile open sagas")
		if err != nil {
			return err
		}
		for _, ex := range page {
			if err := a.verifyOne(ctx, ex, stored, rep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reconcile open sagas: %w", err)
	}
	return nil
}

// verifyReleased flags each saga, running or closed, that answered
// cancelled or rescheduled while the store holds its booking live (a
// restore lost the change): the store stays the truth, the saga is not
// told otherwise, and an operator applies the change again (ops restore)
// or keeps the booking and tells the caller.
func (a *Activities) verifyReleased(ctx context.Context, in booking.StuckInput, prog *booking.StuckProgress) error {
	rep := &prog.Report
	err := a.everyPage(ctx, prog, booking.StuckPhaseReleased, visibility.ReleasedQuery(agency.From(ctx), in.TaskQueue), in.Limit, func(page []*workflowpb.WorkflowExecutionInfo) error {
		keys, stored, err := a.statusesOf(ctx, page, "reconcile released sagas")
		if err != nil {
			return err
		}
		for _, key := range keys {
			st, known := stored[key]
			if !known {
				if err := a.recordRelease(ctx, key, rep); err != nil {
					return err
				}
				continue
			}
			if st != booking.StatusConfirmed && st != booking.StatusHeld {
				continue
			}
			created, err := a.Store.FlagDrift(ctx, booking.Flag{RequestKey: key, Kind: "store_lost_change",
				Detail: "the saga answered cancelled or rescheduled; the store holds the booking " + string(stored[key])})
			if err != nil {
				return storeError("flag lost change", key, err)
			}
			if created {
				rep.LostChanges++
				rep.Details = appendDetail(rep.Details, fmt.Sprintf("saga %s let its booking go, and the store holds it %s: flagged", key, stored[key]))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reconcile released sagas: %w", err)
	}
	return nil
}

// recordRelease records in the store the release of a booking that the
// store lost along with the release itself (booked and let go after the
// backup it was restored from): the saga's last answer, cancelled or
// rescheduled, is then the store's too. A key the store refused, or one
// whose saga holds no booking, is left alone.
func (a *Activities) recordRelease(ctx context.Context, key string, rep *booking.StuckReport) error {
	v, err := a.Temporal.QueryWorkflow(ctx, agency.Scoped(ctx, key), "", booking.QueryState)
	if err != nil {
		return fmt.Errorf("saga state %s: %w", key, err)
	}
	// workflows.BookingState, in part: that package imports this one.
	var saga struct {
		Booking    *booking.Booking
		ReplacedBy string
	}
	if err := v.Get(&saga); err != nil {
		return fmt.Errorf("saga state %s: %w", key, err)
	}
	if saga.Booking == nil {
		return nil
	}
	status := booking.StatusCancelled
	if saga.ReplacedBy != "" {
		status = booking.StatusReleasedForReschedule
	}
	wrote, err := a.Store.RecordRelease(ctx, *saga.Booking, status, saga.ReplacedBy)
	if err != nil {
		return storeError("record release", key, err)
	}
	if wrote {
		rep.ReleasesRecorded++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("saga %s let its booking go, and the store had lost both: recorded %s", key, status))
	}
	return nil
}

// live maps each status a live booking's saga publishes to the store's
// word for it.
var live = map[string]booking.Status{"CONFIRMED": booking.StatusConfirmed, "SELECTED": booking.StatusHeld}

// verifyOne compares one open saga's published status with the store's.
func (a *Activities) verifyOne(ctx context.Context, ex *workflowpb.WorkflowExecutionInfo, stored map[string]booking.Status, rep *booking.StuckReport) error {
	key := keyOf(ctx, ex)
	var published string
	if p := ex.GetSearchAttributes().GetIndexedFields()["BookingStatus"]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &published)
	}
	if st, ok := stored[key]; ok && st == live[published] {
		return nil
	}
	out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: key})
	if err != nil {
		return err
	}
	if out.Booked() && out.Booking.Status == live[published] {
		return nil // it changed between the page's read and this one
	}
	if !out.Found && live[published] != "" {
		return a.flagLost(ctx, key, published, rep)
	}
	err = a.Temporal.SignalWorkflow(ctx, agency.Scoped(ctx, key), "", booking.SignalReconcile, out)
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("signal %s: %w", key, err)
	}
	rep.Drifted++
	rep.Details = appendDetail(rep.Details, fmt.Sprintf("open saga %s published %s; the store has it otherwise, told", key, published))
	return nil
}

// flagLost reports a booking a saga answered live that the store no
// longer holds at all (restored from a backup taken before it, a lagging
// replica promoted): the store stays the truth, so the saga is not told
// otherwise and its mirrors are kept, but an operator must decide
// (ops restore, or ops resolve once the caller is told).
func (a *Activities) flagLost(ctx context.Context, key, published string, rep *booking.StuckReport) error {
	created, err := a.Store.FlagDrift(ctx, booking.Flag{RequestKey: key, Kind: "store_lost_booking",
		Detail: "the saga answered " + published + "; the store has no record of the key"})
	if err != nil {
		return storeError("flag lost booking", key, err)
	}
	if created {
		rep.Lost++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("open saga %s answered %s, and the store has no record of it: flagged", key, published))
	}
	return nil
}

// unknownSince reports whether the saga has been in UNKNOWN since before
// before, by its own state: a saga started long ago may have begun its
// commit a moment ago.
func (a *Activities) unknownSince(ctx context.Context, key string, before time.Time) bool {
	// "state" is workflows.QueryState; that package imports this one.
	v, err := a.Temporal.QueryWorkflow(ctx, agency.Scoped(ctx, key), "", "state")
	if err != nil {
		return false
	}
	var st struct{ UnknownSince *time.Time }
	return v.Get(&st) == nil && st.UnknownSince != nil && st.UnknownSince.Before(before)
}

// keyOf is the request key of a saga the activity's agency listed: its
// workflow id without the agency's prefix (visibility.InAgency keeps
// other agencies' sagas out of the list).
func keyOf(ctx context.Context, ex *workflowpb.WorkflowExecutionInfo) string {
	key, _ := agency.Unscoped(agency.From(ctx), ex.GetExecution().GetWorkflowId())
	return key
}
