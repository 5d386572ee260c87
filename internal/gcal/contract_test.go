package gcal_test

import (
	"testing"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/calendars/calendartest"
)

// Google's adapter keeps the calendar providers' contract on its fake.
func TestTheProviderContract(t *testing.T) {
	t.Parallel()
	calendartest.Run(t, func(t *testing.T) calendartest.Fake {
		f := setup(t)
		return calendartest.Fake{Mirror: f.mirror, Calendar: calendars.Ref{Provider: "google", ID: agentCal},
			CreateOp: "events.insert", DeleteOp: "events.delete", Inject: f.fake.Inject, Calls: f.fake.Calls,
			Type: func(summary string, start, end time.Time) {
				f.fake.Put(agentCal, &calendar.Event{Summary: summary, Start: &calendar.EventDateTime{DateTime: start.Format(time.RFC3339)},
					End: &calendar.EventDateTime{DateTime: end.Format(time.RFC3339)}})
			},
			Erase: func(id string) { // Google keeps a deleted event as a cancelled tombstone
				for _, ev := range f.fake.Events(agentCal) {
					if ev.Id == id {
						ev.Status = "cancelled"
						f.fake.Put(agentCal, &ev)
					}
				}
			},
			Live: func() []calendars.Event {
				var out []calendars.Event
				for _, ev := range f.live(t) {
					start, _ := time.Parse(time.RFC3339, ev.Start.DateTime)
					end, _ := time.Parse(time.RFC3339, ev.End.DateTime)
					out = append(out, calendars.Event{ID: ev.Id, Summary: ev.Summary, Start: start, End: end})
				}
				return out
			}}
	})
}
