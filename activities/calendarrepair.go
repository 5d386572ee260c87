package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

// Calendar repair, for the reconciliation schedule.

// ReconcileCalendar makes the calendars match the store over a window:
// events of ours with no confirmed booking are removed, moved ones are put
// back, missing ones re-created; an event that is not ours over a
// confirmed booking is flagged for a human and never touched.
func (a *Activities) ReconcileCalendar(ctx context.Context, in booking.WindowInput) (booking.CalendarReport, error) {
	var rep booking.CalendarReport
	set, err := a.mirrors(ctx)
	if err != nil || set.Calendar == nil {
		return rep, err
	}
	r := calendarRepair{Activities: a, calendar: set.Calendar}
	cals, err := a.Store.Calendars(ctx)
	if err != nil {
		return rep, storeError("reconcile calendar", "", err)
	}
	byResource := map[string]calendars.Ref{}
	for _, rc := range cals {
		byResource[rc.ResourceID] = calendars.Ref{Provider: rc.Provider, ID: rc.CalendarID}
	}
	page, err := a.Store.BookingsStarting(ctx, in.From, in.To, in.After, in.Limit)
	if err != nil {
		return rep, storeError("reconcile calendar", "", err)
	}
	var listed map[calendars.Ref][]calendars.Event
	if in.After == (booking.Cursor{}) {
		// The first page reads every calendar over the whole window once,
		// for our own events' sake; later pages read only the calendars
		// their bookings are in, over the time those bookings span.
		listed, err = r.listCalendars(ctx, byResource, nil, in.From, in.To, &rep)
		if err == nil {
			err = r.reconcileOurEvents(ctx, listed, &rep)
		}
	} else if len(page) > 0 {
		from, to := span(page)
		listed, err = r.listCalendars(ctx, byResource, page, from, to, nil)
	}
	if err != nil {
		return rep, err
	}
	for _, b := range page {
		if b.Status != booking.StatusConfirmed {
			continue
		}
		for _, res := range b.Intent.Resources() {
			if cal, ok := byResource[res]; ok {
				if evs, read := listed[cal]; read {
					if err := r.reconcileBooking(ctx, b, cal, evs, &rep); err != nil {
						return rep, err
					}
				}
			}
		}
	}
	rep.Next = booking.NextPage(page, in.Limit)
	a.drift(ctx, "calendar_missing", "repaired", rep.Missing)
	a.drift(ctx, "calendar_moved", "repaired", rep.Moved)
	a.drift(ctx, "calendar_orphan", "repaired", rep.Orphans)
	a.drift(ctx, "calendar_foreign", "flagged", rep.Flagged-rep.Unknown)
	a.drift(ctx, "calendar_unknown", "flagged", rep.Unknown)
	return rep, nil
}

// calendarRepair is a reconciliation of the calendars of one agency,
// through its account.
type calendarRepair struct {
	*Activities
	calendar *calendars.Router
}

// span is the time a page of bookings (ordered by start) covers.
func span(page []booking.Booking) (from, to time.Time) {
	from, to = page[0].Intent.StartsAt, page[0].Intent.EndsAt
	for _, b := range page {
		if b.Intent.EndsAt.After(to) {
			to = b.Intent.EndsAt
		}
	}
	return from, to
}

// listCalendars reads the events of each calendar in byResource, or with
// page set only of those page's bookings are in, over [from, to). One
// calendar refused for good (its provider not configured, access
// withdrawn) is left out, and reported in rep when given, without
// stopping the others.
func (a calendarRepair) listCalendars(ctx context.Context, byResource map[string]calendars.Ref, page []booking.Booking,
	from, to time.Time, rep *booking.CalendarReport) (map[calendars.Ref][]calendars.Event, error) {
	wanted := map[calendars.Ref]bool{}
	for res, cal := range byResource { // resources may share a calendar
		want := page == nil
		for _, b := range page {
			want = want || slices.Contains(b.Intent.Resources(), res)
		}
		wanted[cal] = wanted[cal] || want
	}
	listed := map[calendars.Ref][]calendars.Event{}
	for _, cal := range sortedRefs(wanted) {
		if !wanted[cal] {
			continue
		}
		evs, err := a.calendar.Events(ctx, cal, from, to)
		if calendars.Permanent(err) {
			if rep != nil {
				failed(rep, fmt.Sprintf("calendar %s not read: %v", cal, err))
			}
			continue
		}
		if err != nil {
			return nil, mirrorError("reconcile calendar", cal.String(), err, false)
		}
		listed[cal] = ownEvents(ctx, evs)
	}
	return listed, nil
}

// reconcileOurEvents removes our events whose booking is not confirmed and
// puts moved ones back where the store says.
func (a calendarRepair) reconcileOurEvents(ctx context.Context, listed map[calendars.Ref][]calendars.Event, rep *booking.CalendarReport) error {
	for _, cal := range sortedRefs(listed) {
		if err := a.reconcileCalendarEvents(ctx, cal, listed[cal], rep); err != nil {
			return err
		}
	}
	return nil
}

// sortedRefs are m's calendars in a stable order, so reports read the same
// run after run.
func sortedRefs[V any](m map[calendars.Ref]V) []calendars.Ref {
	refs := slices.Collect(maps.Keys(m))
	slices.SortFunc(refs, func(a, b calendars.Ref) int { return strings.Compare(a.String(), b.String()) })
	return refs
}

func (a calendarRepair) reconcileCalendarEvents(ctx context.Context, cal calendars.Ref, evs []calendars.Event, rep *booking.CalendarReport) error {
	for _, ev := range evs {
		if !ev.Ours {
			continue
		}
		b, err := a.Store.Lookup(ctx, ev.RequestKey)
		if errors.Is(err, booking.ErrNotFound) {
			if unknown, err := a.unknownKey(ctx, ev.RequestKey); err != nil || unknown {
				if err == nil {
					err = a.flagUnknown(ctx, cal, ev, rep)
				}
				if err != nil {
					return err
				}
				continue
			}
			err = nil // refused: nothing to show, like a booking not confirmed
		}
		switch {
		case err == nil && b.Status != booking.StatusConfirmed:
			if err := deleteEvent(ctx, a.calendar, cal, ev.RequestKey, ev.BookingID); err != nil {
				if calendars.Permanent(err) {
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
			if _, err := a.calendar.Upsert(ctx, calendarBooking(ctx, b, cal)); err != nil {
				if calendars.Permanent(err) {
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

// unknownKey reports a key the store has no decision on at all: its
// event is not deleted on that ground alone, since the store may have
// lost the booking (restored from an older backup). A key it refused (a
// lost booking an operator released) is known.
func (a calendarRepair) unknownKey(ctx context.Context, key string) (bool, error) {
	_, err := a.Store.Decision(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, storeError("reconcile calendar", key, err)
	}
	return false, nil
}

// flagUnknown reports an event of ours whose key the store does not know.
func (a calendarRepair) flagUnknown(ctx context.Context, cal calendars.Ref, ev calendars.Event, rep *booking.CalendarReport) error {
	created, err := a.Store.FlagDrift(ctx, booking.Flag{RequestKey: ev.RequestKey, Kind: "unknown_calendar_event",
		CalendarID: cal.ID, EventID: ev.ID, Detail: fmt.Sprintf("%s–%s", ev.Start.Format(time.RFC3339), ev.End.Format(time.RFC3339))})
	if err != nil {
		return storeError("flag unknown event", ev.RequestKey, err)
	}
	if created {
		rep.Flagged++
		rep.Unknown++
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("event %s in %s is ours, but the store does not know %s: flagged, kept", ev.ID, cal, ev.RequestKey))
	} else {
		rep.AlreadyFlagged++
	}
	return nil
}

// reconcileBooking re-creates a confirmed booking's missing event and flags
// foreign events over it.
func (a calendarRepair) reconcileBooking(ctx context.Context, b booking.Booking, cal calendars.Ref, evs []calendars.Event, rep *booking.CalendarReport) error {
	present := false
	for _, ev := range evs {
		if ev.Ours && ev.RequestKey == b.RequestKey {
			present = true
		}
		if ev.Ours || !ev.Start.Before(b.Intent.EndsAt) || !ev.End.After(b.Intent.StartsAt) {
			continue
		}
		created, err := a.Store.FlagDrift(ctx, booking.Flag{RequestKey: b.RequestKey, BookingID: b.BookingID,
			Kind: "foreign_calendar_event", CalendarID: cal.ID, EventID: ev.ID,
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
	if _, err := a.calendar.Upsert(ctx, calendarBooking(ctx, b, cal)); err != nil {
		if calendars.Permanent(err) {
			failed(rep, fmt.Sprintf("event for %s in %s: %v", b.RequestKey, cal, err))
			return nil
		}
		return mirrorError("re-create event", b.RequestKey, err, false)
	}
	rep.Missing++
	rep.Details = append(rep.Details, fmt.Sprintf("missing event for %s re-created in %s", b.RequestKey, cal))
	return nil
}

// failed records an item a calendar refused for good.
func failed(r *booking.CalendarReport, detail string) {
	r.Failed++
	r.Details = appendDetail(r.Details, detail)
}
