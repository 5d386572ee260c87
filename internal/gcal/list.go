package gcal

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

// Events lists the live events of a calendar that overlap [from, to),
// ours and anyone else's.
func (m *Mirror) Events(ctx context.Context, calendarID string, from, to time.Time) ([]calendars.Event, error) {
	var out []calendars.Event
	page := ""
	for {
		var res *calendar.Events
		err := m.call(ctx, func(ctx context.Context) (err error) {
			c := m.svc.Events.List(calendarID).Context(ctx).SingleEvents(true).MaxResults(250).
				TimeMin(from.UTC().Format(time.RFC3339)).TimeMax(to.UTC().Format(time.RFC3339))
			if page != "" {
				c = c.PageToken(page)
			}
			res, err = c.Do()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("gcal list %s: %w", calendarID, err)
		}
		for _, ev := range res.Items {
			if ev.Status == "cancelled" {
				continue
			}
			out = append(out, neutral(ev))
		}
		if page = res.NextPageToken; page == "" {
			return out, nil
		}
	}
}

// eventInstant reads a timed boundary; an all-day one counts from its date
// at UTC midnight.
func eventInstant(t *calendar.EventDateTime) time.Time {
	if t == nil {
		return time.Time{}
	}
	if v, err := time.Parse(time.RFC3339, t.DateTime); err == nil {
		return v
	}
	v, _ := time.Parse("2006-01-02", t.Date)
	return v
}

// Lookup returns the event of a booking in a calendar, tombstones
// included; nil when the calendar has no such event.
func (m *Mirror) Lookup(ctx context.Context, calendarID, requestKey string) (*calendars.Event, error) {
	ev, err := m.get(ctx, calendarID, EventID(requestKey))
	if isStatus(err, http.StatusNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gcal lookup %s: %w", requestKey, err)
	}
	out := neutral(ev)
	return &out, nil
}

// neutral is a Google event in bookingsaga's terms. Ours means our mark
// *and* the id we derive from its key: a copy of one of our events under
// another id is someone else's.
func neutral(ev *calendar.Event) calendars.Event {
	e := calendars.Event{ID: ev.Id, Summary: ev.Summary, Status: ev.Status, Start: eventInstant(ev.Start), End: eventInstant(ev.End)}
	if p := ev.ExtendedProperties; p != nil && p.Private[propManaged] == "1" && ev.Id == EventID(p.Private[propRequestKey]) {
		e.Ours, e.RequestKey, e.BookingID = true, p.Private[propRequestKey], p.Private[propBookingID]
	}
	return e
}
