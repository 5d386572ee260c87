package gcal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

const agentCal = "agent-00@example.test"

type fixture struct {
	fake   *gcaltest.Calendar
	mirror *gcal.Mirror
	ctx    context.Context

	mu     sync.Mutex
	sleeps []time.Duration
}

// setup serves a fake calendar and points the real client at it. Retry
// waits are recorded rather than spent.
func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{fake: gcaltest.NewCalendar(), ctx: context.Background()}
	srv := httptest.NewServer(f.fake)
	t.Cleanup(srv.Close)
	pol := retry.Policy{Attempts: 4, Base: 100 * time.Millisecond, Max: 5 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.sleeps = append(f.sleeps, d)
			return nil
		}}
	m, err := gcal.New(f.ctx, gcal.Config{Endpoint: srv.URL + "/calendar/v3/", NoAuth: true,
		CallTimeout: 300 * time.Millisecond, Retry: pol})
	require.NoError(t, err)
	f.mirror = m
	return f
}

// upserted is booking(key), mirrored once: the arrangement most tests
// start from.
func (f *fixture) upserted(t *testing.T, key string) calendars.Booking {
	t.Helper()
	b := booking(key)
	_, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	return b
}

func booking(key string) calendars.Booking {
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	return calendars.Booking{Calendar: calendars.Ref{Provider: "google", ID: agentCal}, BookingID: "b-" + key, RequestKey: key, PropertyRef: "paris-11",
		Reference: "BS-1234", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}
}

func (f *fixture) live(t *testing.T) []calendar.Event {
	t.Helper()
	var out []calendar.Event
	for _, ev := range f.fake.Events(agentCal) {
		if ev.Status != "cancelled" {
			out = append(out, ev)
		}
	}
	return out
}

func TestEventIDIsValidAndStable(t *testing.T) {
	t.Parallel()
	id := gcal.EventID("k-1")
	require.Equal(t, id, gcal.EventID("k-1"))
	require.NotEqual(t, id, gcal.EventID("k-2"))
	require.Regexp(t, `^[a-v0-9]{5,1000}$`, id)
}

func TestForeignEventIsReportedNotOverwritten(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := booking("foreign")
	foreign := &calendar.Event{Id: gcal.EventID(b.RequestKey), Summary: "Dentist",
		Start: &calendar.EventDateTime{DateTime: "2026-12-08T08:00:00Z"}, End: &calendar.EventDateTime{DateTime: "2026-12-08T09:00:00Z"}}
	f.fake.Put(agentCal, foreign)

	_, err := f.mirror.Upsert(f.ctx, b)
	var fe *calendars.ForeignEventError
	require.ErrorAs(t, err, &fe)
	require.True(t, calendars.Permanent(err))
	require.ErrorAs(t, f.mirror.Delete(f.ctx, agentCal, b.RequestKey, b.BookingID), &fe)
	evs := f.live(t)
	require.Len(t, evs, 1)
	require.Equal(t, "Dentist", evs[0].Summary)
}

func TestTombstoneIsRestoredAndDeleteIsIdempotent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.upserted(t, "tombstone")
	require.NoError(t, f.mirror.Delete(f.ctx, agentCal, b.RequestKey, b.BookingID))
	require.NoError(t, f.mirror.Delete(f.ctx, agentCal, b.RequestKey, b.BookingID), "second delete")
	require.NoError(t, f.mirror.Delete(f.ctx, agentCal, "never-booked", "b-never"), "delete of nothing")
	require.Empty(t, f.live(t))

	got, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	require.True(t, got.Restored)
	evs := f.live(t)
	require.Len(t, evs, 1)
	require.Equal(t, got.EventID, evs[0].Id)
}

func TestDriftedEventIsCorrectedThroughA412(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.upserted(t, "moved")
	moved := f.live(t)[0]
	moved.Start = &calendar.EventDateTime{DateTime: "2026-12-08T15:00:00Z", TimeZone: "Europe/Paris"}
	moved.End = &calendar.EventDateTime{DateTime: "2026-12-08T15:30:00Z", TimeZone: "Europe/Paris"}
	f.fake.Put(agentCal, &moved)
	// Someone else wins the race once: the first If-Match update is refused.
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.update", Times: 1, Status: http.StatusPreconditionFailed, Reason: "conditionNotMet"}))

	got, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	require.True(t, got.Corrected)
	require.Equal(t, 2, f.fake.Calls("events.update"))
	require.Equal(t, 2, f.fake.Calls("events.get"), "one read after the 409, another after the 412")
	ev := f.live(t)[0]
	start, err := time.Parse(time.RFC3339, ev.Start.DateTime)
	require.NoError(t, err)
	require.True(t, start.Equal(b.StartsAt), "time comes back from the store, got %s", ev.Start.DateTime)
}

func TestRateLimitsHonourRetryAfter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.insert", Times: 1, Status: http.StatusTooManyRequests, RetryAfter: 3 * time.Second}))
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.insert", Times: 1, Status: http.StatusForbidden, Reason: "rateLimitExceeded", RetryAfter: 2 * time.Second}))
	_, err := f.mirror.Upsert(f.ctx, booking("limited"))
	require.NoError(t, err)
	require.Equal(t, []time.Duration{3 * time.Second, 2 * time.Second}, f.sleeps)
	require.Len(t, f.live(t), 1)
}

func TestRateLimitOutlastingThePolicyStaysRetryable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.insert", Times: 10, Status: http.StatusTooManyRequests, RetryAfter: 9 * time.Second}))
	_, err := f.mirror.Upsert(f.ctx, booking("exhausted"))
	require.Error(t, err)
	require.False(t, calendars.Permanent(err))
	after, ok := retry.Transient(err)
	require.True(t, ok)
	require.Equal(t, 9*time.Second, after, "the activity retry can wait what the server asked")
	require.Equal(t, []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}, f.sleeps, "capped at the policy's max")
	require.Equal(t, 4, f.fake.Calls("events.insert"))
}

func TestBadRequestIsNotRetried(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.insert", Times: 1, Status: http.StatusBadRequest, Reason: "badRequest"}))
	_, err := f.mirror.Upsert(f.ctx, booking("bad"))
	require.Error(t, err)
	require.True(t, calendars.Permanent(err))
	require.Equal(t, 1, f.fake.Calls("events.insert"))
	require.Empty(t, f.sleeps)
}

func TestFreeBusySeesEventsWrittenPastTheService(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.mirror.Upsert(f.ctx, booking("ours"))
	require.NoError(t, err)
	f.fake.Put(agentCal, &calendar.Event{Summary: "lunch, typed in by hand",
		Start: &calendar.EventDateTime{DateTime: "2026-12-08T12:00:00Z"}, End: &calendar.EventDateTime{DateTime: "2026-12-08T13:00:00Z"}})
	f.fake.Put(agentCal, &calendar.Event{Summary: "cancelled", Status: "cancelled",
		Start: &calendar.EventDateTime{DateTime: "2026-12-08T14:00:00Z"}, End: &calendar.EventDateTime{DateTime: "2026-12-08T15:00:00Z"}})

	from := time.Date(2026, 12, 8, 9, 15, 0, 0, time.UTC)
	busy, err := f.mirror.FreeBusy(f.ctx, []string{agentCal, "empty@example.test"}, from, from.Add(12*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []calendars.Interval{
		{Start: from, End: time.Date(2026, 12, 8, 9, 30, 0, 0, time.UTC)},
		{Start: time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)},
	}, busy[agentCal])
	require.Empty(t, busy["empty@example.test"])
}

func TestEventCarriesNoContactDetails(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := booking("private")
	b.Attendees = []string{"agent@example.test"}
	_, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	ev := f.live(t)[0]
	require.Empty(t, ev.Attendees, "attendees only when configured")
	require.Contains(t, ev.Description, "BS-1234")
	require.Equal(t, "Europe/Paris", ev.Start.TimeZone)
	require.Equal(t, "2026-12-08T10:00:00+01:00", ev.Start.DateTime, "rendered in the property's zone")
}
