package msgraph_test

import (
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/calendars/calendartest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
)

// Microsoft's adapter keeps the calendar providers' contract on its fake.
func TestTheProviderContract(t *testing.T) {
	t.Parallel()
	calendartest.Run(t, func(t *testing.T) calendartest.Fake {
		f := setup(t)
		return calendartest.Fake{Mirror: f.mirror, Calendar: calendars.Ref{Provider: "microsoft", ID: mailbox},
			CreateOp: "events.create", DeleteOp: "events.delete", Inject: f.fake.Inject, Calls: f.fake.Calls,
			Type: func(summary string, start, end time.Time) {
				f.fake.Put(mailbox, graphtest.GraphEvent{Subject: summary, Start: start, End: end})
			},
			Erase: func(id string) { f.fake.Remove(mailbox, id) },
			Live: func() []calendars.Event {
				var out []calendars.Event
				for _, ev := range f.fake.Events(mailbox) {
					out = append(out, calendars.Event{ID: ev.ID, Summary: ev.Subject, Start: ev.Start, End: ev.End})
				}
				return out
			}}
	})
}
