package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// The CRM mirror: writing a booking's viewing record, and repairing it.

// SyncCRM makes the CRM's viewing record match the store.
func (a *Activities) SyncCRM(ctx context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
	b, err := a.Store.Lookup(ctx, in.RequestKey)
	if err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	if a.CRM == nil || b.Status == booking.StatusHeld {
		return booking.SyncOutput{Skipped: true}, nil
	}
	rec, err := a.CRM.Upsert(ctx, Viewing(b), 0)
	if err != nil {
		return booking.SyncOutput{}, mirrorError("sync crm", in.RequestKey, err, crm.Permanent(err))
	}
	if _, err := a.Store.RecordMirror(ctx, booking.MirrorRecord{RequestKey: b.RequestKey, CRMRef: rec.ID}); err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	return booking.SyncOutput{CRMRef: rec.ID}, nil
}

// RecordOutcome records how a booking's viewing went, and counts it once
// (viewing_outcomes_total by outcome, property, agent and whether the
// caller was reminded); a resend of the same outcome counts nothing. A
// retry after a reply lost finds it recorded and counts nothing either:
// the count errs low, never double.
func (a *Activities) RecordOutcome(ctx context.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	out, err := a.Store.RecordOutcome(ctx, in)
	if errors.Is(err, booking.ErrNotFound) {
		err = booking.Rejectf(booking.CodeNotBooked, "the store holds no booking under %s", in.RequestKey)
	}
	if err != nil {
		return out, storeError("record outcome", in.RequestKey, err)
	}
	if out.Changed {
		a.metrics().Tagged(map[string]string{"outcome": string(in.Outcome), "property": out.Booking.Intent.PropertyID,
			"agent": out.Booking.Intent.AgentID, "reminded": strconv.FormatBool(out.Reminded)}).Counter("viewing_outcomes_total").Inc(1)
	}
	return out, nil
}

// Viewing is the CRM record a booking should have.
func Viewing(b booking.Booking) crm.Viewing {
	v := crm.Viewing{BookingID: b.BookingID.String(), RequestKey: b.RequestKey, PropertyRef: b.Intent.PropertyID,
		AgentRef: b.Intent.AgentID, StartsAt: b.Intent.StartsAt, EndsAt: b.Intent.EndsAt,
		TimeZone: b.Intent.TimeZone, Status: crm.StatusScheduled, Outcome: string(b.Outcome)}
	switch b.Status {
	case booking.StatusReleasedForReschedule:
		return v.RescheduledTo(b.ReplacedByRequestKey)
	case booking.StatusCancelled, booking.StatusExpired:
		return v.Cancelled()
	}
	return v
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
		over := rec.Version
		if errors.Is(err, crm.ErrNotFound) {
			over = crm.Absent
		}
		if _, err := a.CRM.Upsert(ctx, want, over); err != nil {
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
		a.TimeZone == b.TimeZone && a.Status == b.Status && a.ReplacedBy == b.ReplacedBy && a.Outcome == b.Outcome
}
