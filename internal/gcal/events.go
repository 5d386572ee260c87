package gcal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

// Upsert makes the calendar show b, and is safe to call any number of times.
// It inserts under the derived id; on 409 it reads the event, refuses one
// that is not ours, and otherwise restores a tombstone or corrects a drifted
// event with If-Match, re-reading after a 412.
func (m *Mirror) Upsert(ctx context.Context, b calendars.Booking) (calendars.Synced, error) {
	want, err := m.event(b)
	if err != nil {
		return calendars.Synced{}, err
	}
	ins, err := m.insert(ctx, b.Calendar.ID, want)
	if err == nil {
		return calendars.Synced{EventID: ins.Id, ETag: ins.Etag}, nil
	}
	if !isStatus(err, http.StatusConflict) {
		return calendars.Synced{}, fmt.Errorf("gcal upsert %s: %w", want.Id, err)
	}
	for range calendars.MaxRaces {
		cur, err := m.get(ctx, b.Calendar.ID, want.Id)
		if err != nil {
			return calendars.Synced{}, fmt.Errorf("gcal upsert %s: read after 409: %w", want.Id, err)
		}
		if !ours(cur, b.BookingID) {
			return calendars.Synced{}, &calendars.ForeignEventError{CalendarID: b.Calendar.ID, EventID: want.Id}
		}
		if cur.Status != "cancelled" && sameShown(cur, want) {
			return calendars.Synced{EventID: cur.Id, ETag: cur.Etag}, nil
		}
		upd, err := m.update(ctx, b.Calendar.ID, want, cur.Etag)
		if isStatus(err, http.StatusPreconditionFailed) {
			continue
		}
		if err != nil {
			return calendars.Synced{}, fmt.Errorf("gcal upsert %s: update: %w", want.Id, err)
		}
		return calendars.Synced{EventID: upd.Id, ETag: upd.Etag, Restored: cur.Status == "cancelled", Corrected: cur.Status != "cancelled"}, nil
	}
	return calendars.Synced{}, fmt.Errorf("gcal upsert %s: event kept changing (%d precondition failures)", want.Id, calendars.MaxRaces)
}

// Delete removes the event of a booking. Absent (404) and already deleted
// (410, or a tombstone) count as done; an event that is not ours is refused.
func (m *Mirror) Delete(ctx context.Context, calendarID, requestKey, bookingID string) error {
	id := EventID(requestKey)
	for range calendars.MaxRaces {
		cur, err := m.get(ctx, calendarID, id)
		if isStatus(err, http.StatusNotFound, http.StatusGone) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gcal delete %s: read: %w", id, err)
		}
		if !ours(cur, bookingID) {
			return &calendars.ForeignEventError{CalendarID: calendarID, EventID: id}
		}
		if cur.Status == "cancelled" {
			return nil
		}
		err = m.call(ctx, func(ctx context.Context) error {
			c := m.svc.Events.Delete(calendarID, id).Context(ctx)
			c.Header().Set("If-Match", cur.Etag)
			return c.Do()
		})
		switch {
		case isStatus(err, http.StatusNotFound, http.StatusGone):
			return nil
		case isStatus(err, http.StatusPreconditionFailed):
			continue
		case err != nil:
			return fmt.Errorf("gcal delete %s: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("gcal delete %s: event kept changing (%d precondition failures)", id, calendars.MaxRaces)
}

// FreeBusy returns the busy periods of each calendar in [from, to). It sees
// every opaque event, including those written straight into the calendar,
// which is how a booking that bypassed the service is caught.
func (m *Mirror) FreeBusy(ctx context.Context, calendarIDs []string, from, to time.Time) (map[string][]calendars.Interval, error) {
	req := &calendar.FreeBusyRequest{TimeMin: from.UTC().Format(time.RFC3339), TimeMax: to.UTC().Format(time.RFC3339)}
	for _, id := range calendarIDs {
		req.Items = append(req.Items, &calendar.FreeBusyRequestItem{Id: id})
	}
	var res *calendar.FreeBusyResponse
	err := m.call(ctx, func(ctx context.Context) (err error) {
		res, err = m.svc.Freebusy.Query(req).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gcal freebusy: %w", err)
	}
	out := make(map[string][]calendars.Interval, len(calendarIDs))
	for _, id := range calendarIDs {
		cal, ok := res.Calendars[id]
		if !ok || len(cal.Errors) > 0 {
			return nil, fmt.Errorf("gcal freebusy: calendar %s: %s", id, freeBusyReason(cal))
		}
		for _, p := range cal.Busy {
			s, err1 := time.Parse(time.RFC3339, p.Start)
			e, err2 := time.Parse(time.RFC3339, p.End)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("gcal freebusy: calendar %s: bad period %q–%q", id, p.Start, p.End)
			}
			out[id] = append(out[id], calendars.Interval{Start: s, End: e})
		}
	}
	return out, nil
}

func freeBusyReason(cal calendar.FreeBusyCalendar) string {
	if len(cal.Errors) == 0 {
		return "missing from the answer"
	}
	return cal.Errors[0].Reason
}

func (m *Mirror) insert(ctx context.Context, calendarID string, ev *calendar.Event) (out *calendar.Event, err error) {
	err = m.call(ctx, func(ctx context.Context) error {
		out, err = m.svc.Events.Insert(calendarID, ev).Context(ctx).Do()
		return err
	})
	return out, err
}

func (m *Mirror) get(ctx context.Context, calendarID, id string) (out *calendar.Event, err error) {
	err = m.call(ctx, func(ctx context.Context) error {
		out, err = m.svc.Events.Get(calendarID, id).Context(ctx).Do()
		return err
	})
	return out, err
}

func (m *Mirror) update(ctx context.Context, calendarID string, ev *calendar.Event, etag string) (out *calendar.Event, err error) {
	err = m.call(ctx, func(ctx context.Context) error {
		c := m.svc.Events.Update(calendarID, ev.Id, ev).Context(ctx)
		c.Header().Set("If-Match", etag)
		out, err = c.Do()
		return err
	})
	return out, err
}

// call runs one API call under the retry policy, each attempt with its own
// timeout so a reply held back by the server does not eat the whole budget.
// Google's final refusals come back as calendars.RefusedError (wrapping
// the googleapi.Error, which the callers still inspect).
func (m *Mirror) call(ctx context.Context, fn func(context.Context) error) error {
	err := m.cfg.Retry.Do(ctx, classify, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
		defer cancel()
		return fn(ctx)
	})
	var ge *googleapi.Error
	if errors.As(err, &ge) && !classify(err).Retry {
		return &calendars.RefusedError{Err: err}
	}
	return err
}
