package activities

import (
	"context"
	"errors"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// OpenFlags lists drift a human has to look at.
func (a *Activities) OpenFlags(ctx context.Context, _ booking.FlagsInput) (booking.FlagsOutput, error) {
	flags, err := a.Store.OpenFlags(ctx)
	if err != nil {
		return booking.FlagsOutput{}, storeError("open flags", "", err)
	}
	return booking.FlagsOutput{Flags: flags}, nil
}

// ResolveFlag records an operator's resolution in the event log.
func (a *Activities) ResolveFlag(ctx context.Context, in booking.ResolveInput) (booking.Flag, error) {
	f, err := a.Store.ResolveFlag(ctx, in.FlagID, in.Note)
	if errors.Is(err, store.ErrFlagNotOpen) {
		return booking.Flag{}, rejectedError(booking.Rejectf(booking.CodeFlagNotOpen, "no open drift flag %d", in.FlagID))
	}
	if err != nil {
		return booking.Flag{}, storeError("resolve flag", "", err)
	}
	return f, nil
}

// BookingTimeline reads the store's record and log, the calendars and the
// CRM for one key. A mirror that cannot be read is reported, not fatal.
func (a *Activities) BookingTimeline(ctx context.Context, in booking.KeyInput) (booking.Timeline, error) {
	var t booking.Timeline
	b, err := a.Store.Lookup(ctx, in.RequestKey)
	switch {
	case err == nil:
		t.Booking = &b
	case !errors.Is(err, store.ErrNotFound):
		return t, storeError("timeline", in.RequestKey, err)
	}
	if t.Events, err = a.Store.Events(ctx, in.RequestKey); err != nil {
		return t, storeError("timeline", in.RequestKey, err)
	}
	if t.Booking == nil {
		return t, nil
	}
	if a.Calendar != nil {
		_, cals, err := a.bookingCalendars(ctx, in.RequestKey)
		if err != nil {
			return t, err
		}
		for _, cal := range cals {
			ev, err := a.Calendar.Lookup(ctx, cal, in.RequestKey)
			st := booking.CalendarState{CalendarID: cal, Status: "none"}
			switch {
			case err != nil:
				t.Errors = append(t.Errors, err.Error())
				continue
			case ev != nil:
				st.Status = ev.Status
				st.Start, _ = time.Parse(time.RFC3339, ev.Start.DateTime)
				st.End, _ = time.Parse(time.RFC3339, ev.End.DateTime)
			}
			t.Calendar = append(t.Calendar, st)
		}
	}
	if a.CRM != nil {
		rec, err := a.CRM.Get(ctx, b.BookingID.String())
		switch {
		case err == nil:
			t.CRM = &booking.CRMState{ID: rec.ID, Status: string(rec.Status), StartsAt: rec.StartsAt}
		case !errors.Is(err, crm.ErrNotFound):
			t.Errors = append(t.Errors, err.Error())
		}
	}
	return t, nil
}
