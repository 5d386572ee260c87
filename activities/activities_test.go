package activities_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const agentCal = "agent-00@calendar.test"

type fixture struct {
	t   *testing.T
	env *testsuite.TestActivityEnvironment
	// calURL is the fake calendar's API root.
	calURL string
	acts   *activities.Activities
	cal    *gcaltest.Calendar
	day    time.Time // 00:00 UTC, two days ahead
	// ahead is how far the store's clock runs ahead of the wall's: a
	// test moves it past a message's backoff instead of waiting.
	ahead atomic.Int64
	// pool is the store's database, for what no store call writes.
	pool *pgxpool.Pool
}

// later moves the store's clock on by d.
func (f *fixture) later(d time.Duration) { f.ahead.Add(int64(d)) }

// setup gives real activities on their own database, with a fake calendar
// on the agent.
func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t}
	f.pool = pgtest.New(t)
	st := store.New(f.pool, store.Config{Now: func() time.Time { return time.Now().Add(time.Duration(f.ahead.Load())) }})
	require.NoError(t, st.SetPolicy(ctx, booking.Policy{Version: "p1", SlotMinutes: 60, OpensAt: 6 * time.Hour, ClosesAt: 22 * time.Hour,
		HoldTTL: 10 * time.Minute, MinNotice: time.Hour}))
	require.NoError(t, st.UpsertResource(ctx, booking.Resource{ID: "prop", Kind: "property", Capacity: 1, TimeZone: "UTC"}))
	require.NoError(t, st.UpsertResource(ctx, booking.Resource{ID: "agent-00", Kind: "agent", Capacity: 1, TimeZone: "UTC",
		BufferAfterMinutes: 30, CalendarID: agentCal}))
	fake := gcaltest.NewCalendar()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	f.calURL = srv.URL + "/calendar/v3/"
	m, err := gcal.New(ctx, gcal.Config{Endpoint: f.calURL, NoAuth: true, CallTimeout: time.Second, Retry: retry.Default()})
	require.NoError(t, err)
	f.acts, f.cal, f.day = &activities.Activities{Store: st, Calendar: calendars.NewRouter(map[string]calendars.Provider{booking.ProviderGoogle: m})}, fake,
		time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	var suite testsuite.WorkflowTestSuite
	f.env = suite.NewTestActivityEnvironment()
	f.env.RegisterActivity(f.acts)
	return f
}

// commitInput books the hour from hour on the fixture's day.
func (f *fixture) commitInput(key, policy string, hour int) booking.CommitInput {
	return booking.CommitInput{CommitRequest: booking.CommitRequest{RequestKey: key, ExpectedPolicyVersion: policy, Intent: booking.Intent{
		PropertyID: "prop", AgentID: "agent-00", StartsAt: f.day.Add(time.Duration(hour) * time.Hour),
		EndsAt: f.day.Add(time.Duration(hour+1) * time.Hour), TimeZone: "UTC"}}}
}

// calendarConflict commits in and requires the calendar's conflict.
func (f *fixture) calendarConflict(in booking.CommitInput) booking.ConflictDetail {
	f.t.Helper()
	_, err := f.env.ExecuteActivity(f.acts.Commit, in)
	var appErr *temporal.ApplicationError
	require.True(f.t, errors.As(err, &appErr), "a calendar event blocks the commit; got %v", err)
	require.Equal(f.t, booking.ErrTypeConflict, appErr.Type())
	require.True(f.t, appErr.NonRetryable())
	var d booking.ConflictDetail
	require.NoError(f.t, appErr.Details(&d))
	require.Equal(f.t, "calendar", d.Source)
	return d
}

// handWritten puts an event straight into the agent's calendar.
func (f *fixture) handWritten(from, to time.Time) {
	f.cal.Put(agentCal, &calendar.Event{Summary: "dentist",
		Start: &calendar.EventDateTime{DateTime: from.Format(time.RFC3339)}, End: &calendar.EventDateTime{DateTime: to.Format(time.RFC3339)}})
}

func TestCommitReChecksTheCalendarFirst(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handWritten(f.day.Add(15*time.Hour), f.day.Add(16*time.Hour))
	in := f.commitInput("k-bypass", "p1", 15)
	d := f.calendarConflict(in)
	require.Equal(t, "agent-00", d.Busy[0].ResourceID)
	_, err := f.acts.Store.Lookup(context.Background(), "k-bypass")
	require.ErrorIs(t, err, booking.ErrNotFound, "nothing booked")

	in.RequestKey, in.Intent.StartsAt, in.Intent.EndsAt = "k-free", f.day.Add(17*time.Hour), f.day.Add(18*time.Hour)
	v, err := f.env.ExecuteActivity(f.acts.Commit, in)
	require.NoError(t, err)
	var out booking.CommitOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, booking.StatusConfirmed, out.Booking.Status)
}

func TestMirrorsFollowTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := booking.CommitInput{CommitRequest: booking.CommitRequest{RequestKey: "k-sync", ExpectedPolicyVersion: "p1", Intent: booking.Intent{
		PropertyID: "prop", AgentID: "agent-00", StartsAt: f.day.Add(9 * time.Hour), EndsAt: f.day.Add(10 * time.Hour), TimeZone: "UTC"}}}
	_, err := f.env.ExecuteActivity(f.acts.Commit, in)
	require.NoError(t, err)
	key := booking.KeyInput{RequestKey: "k-sync"}
	for range 2 { // a second sync changes nothing
		_, err = f.env.ExecuteActivity(f.acts.SyncCalendar, key)
		require.NoError(t, err)
	}
	evs := f.cal.Events(agentCal)
	require.Len(t, evs, 1)
	require.Equal(t, "confirmed", evs[0].Status)
	b, err := f.acts.Store.Lookup(context.Background(), "k-sync")
	require.NoError(t, err)
	require.Equal(t, gcal.EventID("k-sync"), b.ProviderEventID)

	_, err = f.env.ExecuteActivity(f.acts.Release, booking.ReleaseInput{RequestKey: "k-sync"})
	require.NoError(t, err)
	_, err = f.env.ExecuteActivity(f.acts.SyncCalendar, key)
	require.NoError(t, err)
	require.Equal(t, "cancelled", f.cal.Events(agentCal)[0].Status)
}

// The re-check widens the slot by the effective buffers, the larger of the
// resource's own and the policy's defaults, as the store does.
func TestTheCalendarReCheckUsesThePolicysLargerBuffer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	require.NoError(t, f.acts.Store.SetPolicy(ctx, booking.Policy{Version: "p2", SlotMinutes: 60, OpensAt: 6 * time.Hour,
		ClosesAt: 22 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour, DefaultBufferAfterMinutes: 60}))
	// 45 minutes after the slot: past the agent's own 30, inside the policy's 60.
	f.handWritten(f.day.Add(16*time.Hour+45*time.Minute), f.day.Add(17*time.Hour+15*time.Minute))
	f.calendarConflict(f.commitInput("k-buffer", "p2", 15))
}

// A calendar whose provider this process has no credentials for is
// reported, and stops nothing else: the other calendars' free/busy is
// still read before a commit, and reconciliation still repairs them.
func TestAnUnconfiguredProviderStopsNoOtherCalendar(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	require.NoError(t, f.acts.Store.UpsertResource(ctx, booking.Resource{ID: "prop", Kind: "property", Capacity: 1, TimeZone: "UTC",
		CalendarID: "prop@agency.example", CalendarProvider: booking.ProviderMicrosoft}))
	f.handWritten(f.day.Add(15*time.Hour), f.day.Add(16*time.Hour))
	f.calendarConflict(f.commitInput("k-busy", "p1", 15))

	_, err := f.env.ExecuteActivity(f.acts.Commit, f.commitInput("k-free", "p1", 17))
	require.NoError(t, err)
	_, err = f.env.ExecuteActivity(f.acts.SyncCalendar, booking.KeyInput{RequestKey: "k-free"})
	require.ErrorContains(t, err, `provider "microsoft" is not configured`)
	for _, ev := range f.cal.Events(agentCal) {
		if ev.Id == gcal.EventID("k-free") {
			ev.Status = "cancelled" // deleted by hand
			f.cal.Put(agentCal, &ev)
		}
	}
	v, err := f.env.ExecuteActivity(f.acts.ReconcileCalendar, booking.WindowInput{From: f.day, To: f.day.AddDate(0, 0, 1), Limit: 100})
	require.NoError(t, err)
	var rep booking.CalendarReport
	require.NoError(t, v.Get(&rep))
	require.Equal(t, 1, rep.Missing, rep.Details)
	require.Equal(t, 1, rep.Failed, rep.Details)
	require.Contains(t, strings.Join(rep.Details, "\n"), "prop@agency.example")
}

// A calendar write waits while a commit runs in the same worker: the
// commit is what a caller is waiting on.
func TestAMirrorWriteYieldsToACommitInFlight(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := f.env.ExecuteActivity(f.acts.Commit, f.commitInput("k-told", "p1", 9))
	require.NoError(t, err)
	// A client that waits for the calendar longer than the test needs,
	// so the commit below is in flight until its free/busy is let go.
	slow, err := gcal.New(ctx, gcal.Config{Endpoint: f.calURL, NoAuth: true, CallTimeout: time.Minute, Retry: retry.Default()})
	require.NoError(t, err)
	f.acts.Calendar = calendars.NewRouter(map[string]calendars.Provider{booking.ProviderGoogle: slow})
	f.acts.MirrorYield = time.Hour
	require.NoError(t, f.cal.Inject(fakeserver.Fault{Op: "freebusy.query", Times: 1, Latency: time.Hour}))
	t.Cleanup(f.cal.Release)              // a failed test ends the held read too
	read := f.cal.Calls("freebusy.query") // the first commit's

	var suite testsuite.WorkflowTestSuite
	other := suite.NewTestActivityEnvironment()
	other.RegisterActivity(f.acts)
	committed := make(chan error, 1)
	go func() {
		_, err := other.ExecuteActivity(f.acts.Commit, f.commitInput("k-waited-on", "p1", 12))
		committed <- err
	}()
	require.Eventually(t, func() bool { return f.cal.Calls("freebusy.query") == read+1 }, 10*time.Second, time.Millisecond)
	synced := make(chan error, 1)
	go func() {
		_, err := f.env.ExecuteActivity(f.acts.SyncCalendar, booking.KeyInput{RequestKey: "k-told"})
		synced <- err
	}()
	require.Eventually(t, func() bool { return activities.MirrorsWaiting(f.acts) == 1 }, 10*time.Second, time.Millisecond)
	require.Empty(t, f.cal.Events(agentCal), "no write while the commit runs")

	f.cal.Release() // the free/busy read fails; the store decides alone
	require.NoError(t, <-committed)
	require.NoError(t, <-synced)
	evs := f.cal.Events(agentCal)
	require.Len(t, evs, 1)
	require.Equal(t, gcal.EventID("k-told"), evs[0].Id)
}

// A calendar that answers slowly costs a commit its re-check budget at
// most, not a share of the caller's wait: the store decides alone, while
// the calendar still holds the read, and flags the booking unchecked.
func TestASlowCalendarCostsTheCommitItsRecheckBudget(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// A client that would wait for the calendar a minute a call.
	slow, err := gcal.New(context.Background(), gcal.Config{Endpoint: f.calURL, NoAuth: true, CallTimeout: time.Minute, Retry: retry.Default()})
	require.NoError(t, err)
	f.acts.Calendar = calendars.NewRouter(map[string]calendars.Provider{booking.ProviderGoogle: slow})
	f.acts.RecheckBudget = 50 * time.Millisecond
	require.NoError(t, f.cal.Inject(fakeserver.Fault{Op: "freebusy.query", Times: 1, Latency: time.Hour}))
	t.Cleanup(f.cal.Release)
	done := make(chan error, 1)
	go func() {
		_, err := f.env.ExecuteActivity(f.acts.Commit, f.commitInput("k-slow-cal", "p1", 9)) // a 10-minute attempt
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second): // a quarter of the attempt, the old bound, is 150 s
		t.Fatal("the commit waited on the calendar past its re-check budget")
	}
	b, err := f.acts.Store.Lookup(context.Background(), "k-slow-cal")
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, b.Status)
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(),
		"SELECT count(*) FROM booking_event WHERE request_key = 'k-slow-cal' AND kind = 'calendar_unchecked'").Scan(&n))
	require.Equal(t, 1, n, "flagged for reconciliation")
}
