package activities

import (
	"context"
	"errors"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The calendar mirror: writing a booking's events, and the re-check of
// free/busy before a commit.

// SyncCalendar makes every calendar of the booking's resources match the
// store: a confirmed booking has its event, anything else has none. It reads
// the store each time, so running it again, late or twice, converges.
func (a *Activities) SyncCalendar(ctx context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
	a.yieldToCommits(ctx)
	set, err := a.mirrors(ctx)
	if err != nil {
		return booking.SyncOutput{}, err
	}
	b, cals, err := a.bookingCalendars(ctx, in.RequestKey)
	if err != nil || set.Calendar == nil || len(cals) == 0 || b.Status == booking.StatusHeld {
		return booking.SyncOutput{Skipped: err == nil}, err
	}
	var errs []error
	permanent := true
	first := "" // the event id the store records: the first calendar's
	for i, cal := range cals {
		var err error
		if b.Status == booking.StatusConfirmed {
			var synced calendars.Synced
			synced, err = set.Calendar.Upsert(ctx, calendarBooking(ctx, b, cal))
			if i == 0 {
				first = synced.EventID
			}
		} else {
			err = deleteEvent(ctx, set.Calendar, cal, b.RequestKey, b.BookingID.String())
		}
		if err != nil {
			errs = append(errs, err)
			permanent = permanent && calendars.Permanent(err)
		}
	}
	if len(errs) > 0 {
		// One refused calendar must not stop the others being written, and
		// a transient failure anywhere keeps the whole step retrying.
		return booking.SyncOutput{}, mirrorError("sync calendar", in.RequestKey, errors.Join(errs...), permanent)
	}
	if b.Status != booking.StatusConfirmed {
		return booking.SyncOutput{}, nil // the events are gone; there is no event id to report
	}
	if err := a.Store.RecordMirror(ctx, booking.MirrorRecord{RequestKey: b.RequestKey, ProviderEventID: first}); err != nil {
		return booking.SyncOutput{}, storeError("sync calendar", in.RequestKey, err)
	}
	return booking.SyncOutput{EventID: first}, nil
}

func (a *Activities) bookingCalendars(ctx context.Context, key string) (booking.Booking, []calendars.Ref, error) {
	b, err := a.Store.Lookup(ctx, key)
	if errors.Is(err, booking.ErrNotFound) {
		return booking.Booking{}, nil, rejectedError(booking.Rejectf(booking.CodeNotBooked, "no booking under this key"))
	}
	if err != nil {
		return booking.Booking{}, nil, storeError("read booking", key, err)
	}
	cals, err := a.reads().Calendars(ctx, b)
	if err != nil {
		return booking.Booking{}, nil, storeError("read booking", key, err)
	}
	return b, cals, nil
}

// calendarBooking is b as cal's event shows it. The event is found by
// its request key in the agency's space (agency.Scoped), so that two
// agencies' bookings under one key never share an event, even in one
// calendar; the default agency's keys are as before agencies.
func calendarBooking(ctx context.Context, b booking.Booking, cal calendars.Ref) calendars.Booking {
	return calendars.Booking{Calendar: cal, BookingID: b.BookingID.String(), RequestKey: agency.Scoped(ctx, b.RequestKey),
		PropertyRef: b.Intent.PropertyID, Reference: receipt.Reference(b.RequestKey),
		StartsAt: b.Intent.StartsAt, EndsAt: b.Intent.EndsAt, TimeZone: b.Intent.TimeZone}
}

// deleteEvent removes the event of key (in the agency's space) from cal.
func deleteEvent(ctx context.Context, calendar *calendars.Router, cal calendars.Ref, key, bookingID string) error {
	return calendar.Delete(ctx, cal, agency.Scoped(ctx, key), bookingID)
}

// ownEvents are evs as the agency of ctx reads them: its own events by
// its request keys, and another agency's (in a calendar both use) as
// none of ours, which the repair never removes or moves.
func ownEvents(ctx context.Context, evs []calendars.Event) []calendars.Event {
	a := agency.From(ctx)
	for i, ev := range evs {
		if !ev.Ours {
			continue
		}
		key, mine := agency.Unscoped(a, ev.RequestKey)
		evs[i].Ours, evs[i].RequestKey = mine, key
	}
	return evs
}
