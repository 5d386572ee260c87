package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// Timeline reads the store's record and log, the calendars and the CRM
// for one key. A mirror that cannot be read is reported, not fatal.
func (c *Catalog) Timeline(ctx context.Context, key string) (booking.Timeline, error) {
	var t booking.Timeline
	b, err := c.Store.Lookup(ctx, key)
	switch {
	case err == nil:
		t.Booking = &b
	case !errors.Is(err, booking.ErrNotFound):
		return t, fmt.Errorf("timeline %s: %w", key, err)
	}
	if t.Events, err = c.Store.Events(ctx, key); err != nil {
		return t, fmt.Errorf("timeline %s: %w", key, err)
	}
	if t.Messages, err = c.Store.Messages(ctx, key); err != nil {
		return t, fmt.Errorf("timeline %s: %w", key, err)
	}
	if t.Booking == nil {
		return t, nil
	}
	set, err := c.mirrors(ctx)
	if err != nil {
		return t, fmt.Errorf("timeline %s: %w", key, err)
	}
	if set.Calendar != nil {
		cals, err := c.Calendars(ctx, b)
		if err != nil {
			return t, fmt.Errorf("timeline %s: %w", key, err)
		}
		for _, cal := range cals {
			t.Calendar, t.Errors = calendarState(ctx, set.Calendar, cal, key, t.Calendar, t.Errors)
		}
	}
	if set.CRM != nil {
		rec, err := c.crmRecord(ctx, set.CRM, b)
		switch {
		case err == nil:
			t.CRM = &booking.CRMState{ID: rec.ID, Status: string(rec.Status), StartsAt: rec.StartsAt}
		case !errors.Is(err, crm.ErrNotFound):
			t.Errors = append(t.Errors, err.Error())
		}
	}
	return t, nil
}

// crmRecord reads b's record in its agency's CRM.
func (c *Catalog) crmRecord(ctx context.Context, crms *crm.Router, b booking.Booking) (crm.Record, error) {
	res, err := c.Store.Resource(ctx, b.Intent.PropertyID)
	var rej *booking.Rejection
	if err != nil && !errors.As(err, &rej) {
		return crm.Record{}, err
	}
	kept, _ := crms.For(res.CRM)
	if kept == nil {
		return crm.Record{}, crm.ErrNotFound
	}
	return kept.Get(ctx, b.BookingID.String())
}

// calendarState is key's event in cal, found by the key in its agency's
// space, as the mirror wrote it.
func calendarState(ctx context.Context, calendar *calendars.Router, cal calendars.Ref, key string, states []booking.CalendarState, errs []string) ([]booking.CalendarState, []string) {
	ev, err := calendar.Lookup(ctx, cal, agency.Scoped(ctx, key))
	if err != nil {
		return states, append(errs, err.Error())
	}
	st := booking.CalendarState{Provider: cal.Provider, CalendarID: cal.ID, Status: "none"}
	if ev != nil {
		st.Status, st.Start, st.End = ev.Status, ev.Start, ev.End
	}
	return append(states, st), errs
}

// Calendars lists the calendars of the booking's resources.
func (c *Catalog) Calendars(ctx context.Context, b booking.Booking) ([]calendars.Ref, error) {
	var cals []calendars.Ref
	for _, id := range b.Intent.Resources() {
		r, err := c.Store.Resource(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read resource %s: %w", id, err)
		}
		if r.CalendarID != "" {
			cals = append(cals, Ref(r))
		}
	}
	return cals, nil
}
