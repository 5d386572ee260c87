package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Sagas whose answer needs the store's: stuck in UNKNOWN, or contradicted.

// ReconcileStuck looks up each saga stuck in UNKNOWN (the search
// attributes never show COMMITTING: it lasts at most the commit wait) and
// tells it what the store says: found settles it, absent makes it send the
// same key again now.
func (a *Activities) ReconcileStuck(ctx context.Context, in booking.StuckInput) (booking.StuckReport, error) {
	var rep booking.StuckReport
	if a.Temporal == nil {
		return rep, nil
	}
	query := booking.StuckQuery(in.TaskQueue, in.Before)
	res, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(in.Limit)})
	if err != nil {
		return rep, fmt.Errorf("reconcile stuck: list: %w", err)
	}
	for _, ex := range res.GetExecutions() {
		key := ex.GetExecution().GetWorkflowId()
		if !a.unknownSince(ctx, key, in.Before) {
			continue // in flight, not stuck: its outcome has not been unknown for long
		}
		out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: key})
		if err != nil {
			return rep, err
		}
		err = a.Temporal.SignalWorkflow(ctx, key, "", booking.SignalReconcile, out)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			continue // it closed meanwhile: settled
		}
		if err != nil {
			return rep, fmt.Errorf("reconcile stuck %s: signal: %w", key, err)
		}
		switch {
		case out.Refusal != nil:
			rep.Found++
			rep.Details = append(rep.Details, fmt.Sprintf("stuck saga %s: the store refused it (%s)", key, out.Refusal.Code))
		case out.Found:
			rep.Found++
			rep.Details = append(rep.Details, fmt.Sprintf("stuck saga %s: the store has it (%s)", key, out.Booking.Status))
		default:
			rep.Absent++
			rep.Details = append(rep.Details, fmt.Sprintf("stuck saga %s: absent from the store, committing again with the same key", key))
		}
	}
	a.drift("stuck_commit", "repaired", rep.Found+rep.Absent)
	if err := a.verifyOpen(ctx, in, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// verifyOpen checks the answer each open booking saga publishes against
// the store, and tells a saga that disagrees what the store holds: it
// reads the store afresh and adopts the store's answer.
func (a *Activities) verifyOpen(ctx context.Context, in booking.StuckInput, rep *booking.StuckReport) error {
	// Each status a live booking's saga publishes, and the store's word for it.
	live := map[string]booking.Status{"CONFIRMED": booking.StatusConfirmed, "SELECTED": booking.StatusHeld}
	query := booking.LiveQuery(in.TaskQueue)
	res, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(in.Limit)})
	if err != nil {
		return fmt.Errorf("reconcile open sagas: list: %w", err)
	}
	for _, ex := range res.GetExecutions() {
		key := ex.GetExecution().GetWorkflowId()
		var published string
		if p := ex.GetSearchAttributes().GetIndexedFields()["BookingStatus"]; p != nil {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &published)
		}
		out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: key})
		if err != nil {
			return err
		}
		if out.Booked() && out.Booking.Status == live[published] {
			continue
		}
		if !out.Found && live[published] != "" {
			if err := a.flagLost(ctx, key, published, rep); err != nil {
				return err
			}
			continue
		}
		err = a.Temporal.SignalWorkflow(ctx, key, "", booking.SignalReconcile, out)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			return fmt.Errorf("reconcile open saga %s: signal: %w", key, err)
		}
		rep.Drifted++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("open saga %s published %s; the store has it otherwise, told", key, published))
	}
	a.drift("saga_answer", "told", rep.Drifted)
	a.drift("store_lost_booking", "flagged", rep.Lost)
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
	v, err := a.Temporal.QueryWorkflow(ctx, key, "", "state")
	if err != nil {
		return false
	}
	var st struct{ UnknownSince *time.Time }
	return v.Get(&st) == nil && st.UnknownSince != nil && st.UnknownSince.Before(before)
}
