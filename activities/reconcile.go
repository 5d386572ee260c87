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
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// ReconcileCalendar makes the calendars match the store over a window:
// events of ours with no confirmed booking are removed, moved ones are put
// back, missing ones re-created; an event that is not ours over a
// confirmed booking is flagged for a human and never touched.
func (a *Activities) ReconcileCalendar(ctx context.Context, in booking.WindowInput) (booking.CalendarReport, error) {
	var rep booking.CalendarReport
	if a.Calendar == nil {
		return rep, nil
	}
	cals, err := a.Store.Calendars(ctx)
	if err != nil {
		return rep, storeError("reconcile calendar", "", err)
	}
	listed := map[string][]gcal.Event{}
	for _, rc := range cals {
		evs, err := a.Calendar.Events(ctx, rc.CalendarID, in.From, in.To)
		if err != nil {
			return rep, mirrorError("reconcile calendar", rc.CalendarID, err, gcal.Permanent(err))
		}
		listed[rc.CalendarID] = evs
		if in.After != (booking.Cursor{}) {
			continue // our own events are checked once, on the first page
		}
		if err := a.reconcileOurEvents(ctx, rc.CalendarID, evs, &rep); err != nil {
			return rep, err
		}
	}
	page, err := a.Store.BookingsStarting(ctx, in.From, in.To, in.After, in.Limit)
	if err != nil {
		return rep, storeError("reconcile calendar", "", err)
	}
	byResource := map[string]string{}
	for _, rc := range cals {
		byResource[rc.ResourceID] = rc.CalendarID
	}
	for _, b := range page {
		if b.Status != booking.StatusConfirmed {
			continue
		}
		for _, res := range b.Intent.Resources() {
			if cal, ok := byResource[res]; ok {
				if err := a.reconcileBooking(ctx, b, cal, listed[cal], &rep); err != nil {
					return rep, err
				}
			}
		}
	}
	if len(page) == in.Limit && in.Limit > 0 {
		last := page[len(page)-1]
		rep.Next = &booking.Cursor{StartsAt: last.Intent.StartsAt, RequestKey: last.RequestKey}
	}
	a.drift("calendar_missing", "repaired", rep.Missing)
	a.drift("calendar_moved", "repaired", rep.Moved)
	a.drift("calendar_orphan", "repaired", rep.Orphans)
	a.drift("calendar_foreign", "flagged", rep.Flagged)
	return rep, nil
}

// reconcileOurEvents removes our events whose booking is not confirmed and
// puts moved ones back where the store says.
func (a *Activities) reconcileOurEvents(ctx context.Context, cal string, evs []gcal.Event, rep *booking.CalendarReport) error {
	for _, ev := range evs {
		if !ev.Ours {
			continue
		}
		b, err := a.Store.Lookup(ctx, ev.RequestKey)
		switch {
		case errors.Is(err, store.ErrNotFound) || err == nil && b.Status != booking.StatusConfirmed:
			if err := a.Calendar.Delete(ctx, cal, ev.RequestKey, ev.BookingID); err != nil {
				if gcal.Permanent(err) {
					failed(rep, fmt.Sprintf("orphan event %s in %s: %v", ev.ID, cal, err))
					continue
				}
				return mirrorError("remove orphan event", ev.RequestKey, err, false)
			}
			rep.Orphans++
			rep.Details = append(rep.Details, fmt.Sprintf("orphan event %s removed from %s", ev.ID, cal))
		case err != nil:
			return storeError("reconcile calendar", ev.RequestKey, err)
		case !ev.Start.Equal(b.Intent.StartsAt) || !ev.End.Equal(b.Intent.EndsAt):
			if _, err := a.Calendar.Upsert(ctx, calendarBooking(b, cal)); err != nil {
				if gcal.Permanent(err) {
					failed(rep, fmt.Sprintf("moved event %s in %s: %v", ev.ID, cal, err))
					continue
				}
				return mirrorError("correct moved event", ev.RequestKey, err, false)
			}
			rep.Moved++
			rep.Details = append(rep.Details, fmt.Sprintf("event %s in %s moved back to %s", ev.ID, cal, b.Intent.StartsAt.Format(time.RFC3339)))
		}
	}
	return nil
}

// reconcileBooking re-creates a confirmed booking's missing event and flags
// foreign events over it.
func (a *Activities) reconcileBooking(ctx context.Context, b booking.Booking, cal string, evs []gcal.Event, rep *booking.CalendarReport) error {
	id, present := gcal.EventID(b.RequestKey), false
	for _, ev := range evs {
		if ev.ID == id {
			present = true
		}
		if ev.Ours || !ev.Start.Before(b.Intent.EndsAt) || !ev.End.After(b.Intent.StartsAt) {
			continue
		}
		created, err := a.Store.FlagDrift(ctx, booking.Flag{RequestKey: b.RequestKey, BookingID: b.BookingID,
			Kind: "foreign_calendar_event", CalendarID: cal, EventID: ev.ID,
			// Times only: the title of someone's private appointment is
			// theirs, and the flag outlives contact retention.
			Detail: fmt.Sprintf("%s–%s", ev.Start.Format(time.RFC3339), ev.End.Format(time.RFC3339))})
		if err != nil {
			return storeError("flag drift", b.RequestKey, err)
		}
		if created {
			rep.Flagged++
			rep.Details = append(rep.Details, fmt.Sprintf("foreign event %s in %s overlaps booking %s: flagged", ev.ID, cal, b.RequestKey))
		} else {
			rep.AlreadyFlagged++
		}
	}
	if present {
		return nil
	}
	// The page was read a while ago: a booking cancelled since must not
	// get its event back.
	if cur, err := a.Store.Lookup(ctx, b.RequestKey); err != nil || cur.Status != booking.StatusConfirmed {
		return ignoreNotFound(err)
	}
	if _, err := a.Calendar.Upsert(ctx, calendarBooking(b, cal)); err != nil {
		if gcal.Permanent(err) {
			failed(rep, fmt.Sprintf("event for %s in %s: %v", b.RequestKey, cal, err))
			return nil
		}
		return mirrorError("re-create event", b.RequestKey, err, false)
	}
	rep.Missing++
	rep.Details = append(rep.Details, fmt.Sprintf("missing event for %s re-created in %s", b.RequestKey, cal))
	return nil
}

// maxDetails bounds a report's details, which travel in workflow history.
const maxDetails = 100

// failed records an item a calendar refused for good.
func failed(r *booking.CalendarReport, detail string) {
	r.Failed++
	r.Details = appendDetail(r.Details, detail)
}

func appendDetail(d []string, s string) []string {
	if len(d) >= maxDetails {
		return d
	}
	return append(d, s)
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// ReconcileCRM makes each booking's CRM record match the store.
func (a *Activities) ReconcileCRM(ctx context.Context, in booking.WindowInput) (booking.CRMReport, error) {
	var rep booking.CRMReport
	if a.CRM == nil {
		return rep, nil
	}
	page, err := a.Store.BookingsStarting(ctx, in.From, in.To, in.After, in.Limit)
	if err != nil {
		return rep, storeError("reconcile crm", "", err)
	}
	for _, listed := range page {
		// Read again: the page is a while old, and the saga may have
		// written a newer state (a cancel) to the CRM since.
		b, err := a.Store.Lookup(ctx, listed.RequestKey)
		if err != nil {
			return rep, storeError("reconcile crm", listed.RequestKey, err)
		}
		if b.Status == booking.StatusHeld {
			continue
		}
		want := Viewing(b)
		rec, err := a.CRM.Get(ctx, want.BookingID)
		switch {
		case errors.Is(err, crm.ErrNotFound) && b.Status != booking.StatusConfirmed:
			continue // never mirrored and no longer live: nothing to tell the CRM
		case errors.Is(err, crm.ErrNotFound):
			rep.Missing++
			rep.Details = append(rep.Details, "missing CRM record for "+b.RequestKey+" written")
		case err != nil && crm.Permanent(err):
			rep.Failed++
			rep.Details = appendDetail(rep.Details, fmt.Sprintf("CRM refused %s: %v", b.RequestKey, err))
			continue
		case err != nil:
			return rep, mirrorError("reconcile crm", b.RequestKey, err, false)
		case sameViewing(rec.Viewing, want):
			continue
		default:
			rep.Mismatched++
			rep.Details = append(rep.Details, fmt.Sprintf("CRM record for %s said %s, corrected to %s", b.RequestKey, rec.Status, want.Status))
		}
		if _, err := a.CRM.Upsert(ctx, want); err != nil {
			if crm.Permanent(err) {
				rep.Failed++
				continue
			}
			return rep, mirrorError("reconcile crm", b.RequestKey, err, false)
		}
	}
	if len(page) == in.Limit && in.Limit > 0 {
		last := page[len(page)-1]
		rep.Next = &booking.Cursor{StartsAt: last.Intent.StartsAt, RequestKey: last.RequestKey}
	}
	a.drift("crm_missing", "repaired", rep.Missing)
	a.drift("crm_mismatch", "repaired", rep.Mismatched)
	return rep, nil
}

func sameViewing(a, b crm.Viewing) bool {
	return a.BookingID == b.BookingID && a.RequestKey == b.RequestKey && a.PropertyRef == b.PropertyRef &&
		a.AgentRef == b.AgentRef && a.StartsAt.Equal(b.StartsAt) && a.EndsAt.Equal(b.EndsAt) &&
		a.TimeZone == b.TimeZone && a.Status == b.Status && a.ReplacedBy == b.ReplacedBy
}

// ReconcileStuck looks up each saga stuck in UNKNOWN (the search
// attributes never show COMMITTING: it lasts at most the commit wait) and
// tells it what the store says: found settles it, absent makes it send the
// same key again now.
func (a *Activities) ReconcileStuck(ctx context.Context, in booking.StuckInput) (booking.StuckReport, error) {
	var rep booking.StuckReport
	if a.Temporal == nil {
		return rep, nil
	}
	query := fmt.Sprintf(`WorkflowType = "Booking" AND ExecutionStatus = "Running" AND TaskQueue = %q AND BookingStatus = "UNKNOWN" AND StartTime < %q`,
		in.TaskQueue, in.Before.UTC().Format(time.RFC3339Nano))
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
	query := fmt.Sprintf(`WorkflowType = "Booking" AND ExecutionStatus = "Running" AND TaskQueue = %q AND BookingStatus IN ("CONFIRMED", "SELECTED")`,
		in.TaskQueue)
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
		err = a.Temporal.SignalWorkflow(ctx, key, "", booking.SignalReconcile, out)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			return fmt.Errorf("reconcile open saga %s: signal: %w", key, err)
		}
		rep.Drifted++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("open saga %s published %s; the store has it otherwise, told", key, published))
	}
	a.drift("saga_answer", "told", rep.Drifted)
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

// ExpireStaleHolds expires holds past their time, at most Limit.
func (a *Activities) ExpireStaleHolds(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	n, err := a.Store.ExpireHolds(ctx, in.Limit)
	if err != nil {
		return booking.CountOutput{}, storeError("expire holds", "", err)
	}
	a.drift("expired_hold", "repaired", n)
	return booking.CountOutput{Count: n}, nil
}

// PurgeContacts deletes contact details past retention, at most Limit.
func (a *Activities) PurgeContacts(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	n, err := a.Store.PurgeContacts(ctx, in.Limit)
	if err != nil {
		return booking.CountOutput{}, storeError("purge contacts", "", err)
	}
	a.drift("contact_retention", "purged", n)
	return booking.CountOutput{Count: n}, nil
}
