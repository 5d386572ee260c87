package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// The CRM mirror: writing a booking's viewing record, and repairing it.

// SyncCRM makes the CRM's viewing record match the store.
func (a *Activities) SyncCRM(ctx context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
	a.yieldToCommits(ctx)
	set, err := a.mirrors(ctx)
	if err != nil {
		return booking.SyncOutput{}, err
	}
	b, err := a.Store.Lookup(ctx, in.RequestKey)
	if err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	if set.CRM == nil || b.Status == booking.StatusHeld {
		return booking.SyncOutput{Skipped: true}, nil
	}
	m, err := a.mirrorOf(ctx, set.CRM, b)
	if err != nil || m.crm == nil {
		return booking.SyncOutput{Skipped: m.crm == nil}, err
	}
	rec, err := m.crm.Upsert(ctx, m.want, 0)
	if err != nil {
		return booking.SyncOutput{}, mirrorError("sync crm", in.RequestKey, err, crm.Permanent(err))
	}
	if err := a.Store.RecordMirror(ctx, booking.MirrorRecord{RequestKey: b.RequestKey, CRMRef: rec.ID}); err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	if err := a.linkCaller(ctx, m, b.RequestKey, rec.ID); err != nil {
		return booking.SyncOutput{}, err
	}
	return booking.SyncOutput{CRMRef: rec.ID}, nil
}

// mirror is a booking's CRM: the agency's, named by its property, and
// the record it should hold there, titled in the agency's language.
type mirror struct {
	crm  crm.CRM
	name string
	want crm.Viewing
}

func (a *Activities) mirrorOf(ctx context.Context, crms *crm.Router, b booking.Booking) (mirror, error) {
	m := mirror{want: Viewing(b)}
	names := map[string]string{}
	for i, id := range []string{b.Intent.PropertyID, b.Intent.AgentID} {
		res, err := a.Store.Resource(ctx, id)
		var rej *booking.Rejection
		if err != nil && !errors.As(err, &rej) { // a resource gone since is "the property"
			return m, storeError("crm of", b.RequestKey, err)
		}
		if i == 0 {
			m.crm, m.name = crms.For(res.CRM)
		}
		all := res.SpokenNames()
		names[id] = cmp.Or(all[string(a.CRMLang)], all[""])
	}
	m.want.Title = speech.Speaker{Lang: cmp.Or(a.CRMLang, speech.English), Names: names}.MeetingTitle(b.Intent.PropertyID, b.Intent.AgentID)
	return m, nil
}

// linkCaller puts the viewing on its caller's contact, in a CRM that
// keeps contacts, where the caller agreed to be kept on file; the contact
// found is kept in the store, so the next write (a reschedule's new
// meeting) and the caller's erasure find it. A contact found after the
// caller was erased and forgotten goes at once.
func (a *Activities) linkCaller(ctx context.Context, m mirror, key, recordID string) error {
	contacts, ok := m.crm.(crm.Contacts)
	if !ok {
		return nil
	}
	on, err := a.Store.CallerOnFile(ctx, key)
	if errors.Is(err, booking.ErrNoContact) {
		return nil
	}
	if err != nil {
		return storeError("link caller", key, err)
	}
	c, known := on.Contact, ""
	if on.Linked.CRM == m.name {
		known = on.Linked.ContactRef
	}
	linked, err := contacts.Link(ctx, recordID, crm.Caller{Name: c.Name, Email: c.Email, Phone: c.Phone, ContactID: known})
	if err != nil {
		return mirrorError("link caller", key, err, crm.Permanent(err))
	}
	if linked.ContactID == known && linked.Created == on.Linked.Created {
		return nil
	}
	rec := booking.CRMContact{CRM: m.name, ContactRef: linked.ContactID, Created: linked.Created, Records: []string{recordID}}
	forgotten, err := a.Store.RecordCRMContact(ctx, on.OwnerKey, rec)
	if err != nil {
		return storeError("link caller", key, err)
	}
	if forgotten {
		if err := forgetContact(ctx, contacts, rec); err != nil {
			return mirrorError("link caller", key, err, false)
		}
	}
	return nil
}

// RecordOutcome records how a booking's viewing went, and counts it once
// (viewing_outcomes_total by outcome, property, agent, whether the
// caller was reminded and whether they replied they were coming); a resend of the same outcome counts nothing. A
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
		a.metrics(ctx).Tagged(map[string]string{"outcome": string(in.Outcome), "property": out.Booking.Intent.PropertyID,
			"agent": out.Booking.Intent.AgentID, "reminded": strconv.FormatBool(out.Reminded),
			"reconfirmed": strconv.FormatBool(out.Booking.ReconfirmedAt != nil)}).Counter("viewing_outcomes_total").Inc(1)
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
	set, err := a.mirrors(ctx)
	if err != nil || set.CRM == nil {
		return rep, err
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
		m, err := a.mirrorOf(ctx, set.CRM, b)
		if err != nil {
			return rep, err
		}
		if m.crm == nil {
			continue // the agency keeps no CRM here
		}
		want := m.want
		rec, err := m.crm.Get(ctx, want.BookingID)
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
		case sameViewing(rec.Viewing, want) && len(rec.Contacts) > 0:
			continue
		case sameViewing(rec.Viewing, want):
			if err := a.relink(ctx, m, &rep, b.RequestKey, rec.ID); err != nil {
				return rep, err
			}
			continue
		default:
			rep.Mismatched++
			rep.Details = append(rep.Details, fmt.Sprintf("CRM record for %s said %s, corrected to %s", b.RequestKey, rec.Status, want.Status))
		}
		over := rec.Version
		if errors.Is(err, crm.ErrNotFound) {
			over = crm.Absent
		}
		rec, err = m.crm.Upsert(ctx, want, over)
		if err != nil {
			if crm.Permanent(err) {
				rep.Failed++
				continue
			}
			return rep, mirrorError("reconcile crm", b.RequestKey, err, false)
		}
		if len(rec.Contacts) == 0 {
			if err := a.relink(ctx, m, &rep, b.RequestKey, rec.ID); err != nil {
				return rep, err
			}
		}
	}
	rep.Next = booking.NextPage(page, in.Limit)
	a.drift(ctx, "crm_missing", "repaired", rep.Missing)
	a.drift(ctx, "crm_mismatch", "repaired", rep.Mismatched)
	return rep, nil
}

// relink puts a record without a contact on its caller's, where they
// are on file; a refusal is counted in rep, as a write's is.
func (a *Activities) relink(ctx context.Context, m mirror, rep *booking.CRMReport, key, recordID string) error {
	err := a.linkCaller(ctx, m, key, recordID)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == booking.ErrTypeMirrorRefused {
		rep.Failed++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("CRM refused the contact of %s: %v", key, err))
		return nil
	}
	return err
}

func sameViewing(a, b crm.Viewing) bool {
	return a.BookingID == b.BookingID && a.RequestKey == b.RequestKey && a.PropertyRef == b.PropertyRef &&
		a.AgentRef == b.AgentRef && a.StartsAt.Equal(b.StartsAt) && a.EndsAt.Equal(b.EndsAt) &&
		a.TimeZone == b.TimeZone && a.Status == b.Status && a.ReplacedBy == b.ReplacedBy && a.Outcome == b.Outcome
}
