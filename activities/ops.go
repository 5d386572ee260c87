package activities

import (
	"context"
	"errors"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// FlagsInput asks for the open drift flags.
type FlagsInput struct{}

// FlagsOutput lists open drift flags.
type FlagsOutput struct {
	Flags []booking.Flag
}

// OpenFlags lists drift a human has to look at.
func (a *Activities) OpenFlags(ctx context.Context, _ FlagsInput) (FlagsOutput, error) {
	flags, err := a.Store.OpenFlags(ctx)
	if err != nil {
		return FlagsOutput{}, storeError("open flags", "", err)
	}
	return FlagsOutput{Flags: flags}, nil
}

// ResolveInput closes a flag with a note.
type ResolveInput struct {
	FlagID int64
	Note   string
}

// ResolveFlag records an operator's resolution in the event log.
func (a *Activities) ResolveFlag(ctx context.Context, in ResolveInput) (booking.Flag, error) {
	f, err := a.Store.ResolveFlag(ctx, in.FlagID, in.Note)
	if errors.Is(err, store.ErrFlagNotOpen) {
		return booking.Flag{}, rejectedError(booking.Rejectf(booking.CodeFlagNotOpen, "no open drift flag %d", in.FlagID))
	}
	if err != nil {
		return booking.Flag{}, storeError("resolve flag", "", err)
	}
	return f, nil
}

// Timeline is one booking as every system sees it, side by side.
type Timeline struct {
	Booking  *booking.Booking
	Events   []booking.Event
	Calendar []CalendarState
	CRM      *crm.Record
	// Errors are the systems that could not be read.
	Errors []string
}

// CalendarState is the booking's event in one calendar.
type CalendarState struct {
	CalendarID string
	Status     string // "none" when there is no event
	Start, End time.Time
}

// BookingTimeline reads the store's record and log, the calendars and the
// CRM for one key. A mirror that cannot be read is reported, not fatal.
func (a *Activities) BookingTimeline(ctx context.Context, in KeyInput) (Timeline, error) {
	var t Timeline
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
			st := CalendarState{CalendarID: cal, Status: "none"}
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
			t.CRM = &rec
		case !errors.Is(err, crm.ErrNotFound):
			t.Errors = append(t.Errors, err.Error())
		}
	}
	return t, nil
}
