package calendars_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

const (
	googleCal = "flat@example.test"
	mailbox   = "hugo@agency.example"
)

var (
	app  = graphtest.GraphApp{TenantID: "tenant-1", ClientID: "app-1", ClientSecret: "s3cret"}
	day  = time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	once = retry.Policy{Attempts: 1, Base: time.Millisecond, Max: time.Millisecond}
)

type fixture struct {
	google *gcaltest.Calendar
	graph  *graphtest.Graph
	router *calendars.Router
}

// setup routes to Google's adapter and Microsoft's, each on its fake.
func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{google: gcaltest.NewCalendar(), graph: graphtest.NewGraph(app, mailbox)}
	gs, ms := httptest.NewServer(f.google), httptest.NewServer(f.graph)
	t.Cleanup(func() { f.google.Release(); f.graph.Release(); gs.Close(); ms.Close() })
	g, err := gcal.New(context.Background(), gcal.Config{Endpoint: gs.URL + "/calendar/v3/", NoAuth: true, CallTimeout: time.Second, Retry: once})
	require.NoError(t, err)
	m, err := msgraph.New(msgraph.Config{Endpoint: ms.URL + "/v1.0", Login: ms.URL, TenantID: app.TenantID, ClientID: app.ClientID,
		ClientSecret: app.ClientSecret, CallTimeout: time.Second, Retry: once})
	require.NoError(t, err)
	f.router = calendars.NewRouter(map[string]calendars.Provider{"google": g, "microsoft": m, "nil": nil})
	return f
}

func viewing(cal calendars.Ref) calendars.Booking {
	start := day.Add(9 * time.Hour)
	return calendars.Booking{Calendar: cal, BookingID: "b-1", RequestKey: "k-1", PropertyRef: "paris-11",
		Reference: "BS-1234", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}
}

// Each call goes to its calendar's provider, and only there.
func TestEachCalendarIsWrittenByItsProvider(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	google, outlook := calendars.Ref{Provider: "google", ID: googleCal}, calendars.Ref{Provider: "microsoft", ID: mailbox}
	_, err := f.router.Upsert(ctx, viewing(google))
	require.NoError(t, err)
	require.Len(t, f.google.Events(googleCal), 1)
	require.Empty(t, f.graph.Events(mailbox))
	synced, err := f.router.Upsert(ctx, viewing(outlook))
	require.NoError(t, err)
	require.Len(t, f.graph.Events(mailbox), 1)
	require.Equal(t, gcal.EventID("k-1"), f.router.EventID(google, "k-1"), "Google's ids are known before the write")
	require.Empty(t, f.router.EventID(outlook, "k-1"), "Graph assigns its ids")

	ev, err := f.router.Lookup(ctx, outlook, "k-1")
	require.NoError(t, err)
	require.Equal(t, synced.EventID, ev.ID)
	require.NoError(t, f.router.Delete(ctx, outlook, "k-1", "b-1"))
	require.Empty(t, f.graph.Events(mailbox))
	require.Len(t, f.google.Events(googleCal), 1, "the other provider's event stands")
}

// A calendar of a provider the process lacks is refused for good, and a
// provider that fails stops no other: free/busy answers what it could
// read and names what it could not.
func TestOneProviderDownOrMissingStopsNoOther(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	zoom := calendars.Ref{Provider: "zoom", ID: "room-1"}
	_, err := f.router.Upsert(ctx, viewing(zoom))
	require.True(t, calendars.Permanent(err), "no retry can write it: %v", err)
	require.ErrorContains(t, err, `provider "zoom" is not configured`)
	_, err = f.router.Upsert(ctx, viewing(calendars.Ref{Provider: "nil", ID: "x"}))
	require.True(t, calendars.Permanent(err), "a nil provider is left out")

	noon := day.Add(12 * time.Hour)
	f.google.Put(googleCal, &calendar.Event{Summary: "lunch", Start: &calendar.EventDateTime{DateTime: noon.Format(time.RFC3339)},
		End: &calendar.EventDateTime{DateTime: noon.Add(time.Hour).Format(time.RFC3339)}})
	f.graph.Put(mailbox, graphtest.GraphEvent{Subject: "Dentist", Start: noon, End: noon.Add(time.Hour)})
	require.NoError(t, f.graph.Inject(fakeserver.Fault{Op: "getSchedule", Status: http.StatusServiceUnavailable}))

	google, outlook := calendars.Ref{Provider: "google", ID: googleCal}, calendars.Ref{Provider: "microsoft", ID: mailbox}
	busy, err := f.router.FreeBusy(ctx, []calendars.Ref{google, outlook, zoom}, day, day.Add(24*time.Hour))
	require.Error(t, err)
	require.ErrorContains(t, err, `provider "zoom" is not configured`)
	require.Equal(t, map[calendars.Ref][]calendars.Interval{google: {{Start: noon, End: noon.Add(time.Hour)}}}, busy,
		"Google's answer stands; Microsoft's and zoom's calendars are missing, never read as free")

	f.graph.ClearFaults()
	busy, err = f.router.FreeBusy(ctx, []calendars.Ref{google, outlook}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Len(t, busy, 2)
}

// A read-only router (the API's) refuses every write before it reaches a
// provider, on each of them alike: the one guard, whatever the adapter.
func TestAReadOnlyRouterWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ro := f.router.ReadOnly()
	for _, cal := range []calendars.Ref{{Provider: "google", ID: "agent@example.test"}, {Provider: "microsoft", ID: mailbox}} {
		_, err := ro.Upsert(t.Context(), viewing(cal))
		require.ErrorIs(t, err, calendars.ErrReadOnly, cal.Provider)
		require.ErrorIs(t, ro.Delete(t.Context(), cal, "k-1", "b-1"), calendars.ErrReadOnly, cal.Provider)
		_, err = ro.Events(t.Context(), cal, day, day.Add(24*time.Hour))
		require.NoError(t, err, "it reads")
	}
	require.Empty(t, f.google.Events("agent@example.test"))
	require.Empty(t, f.graph.Events(mailbox))
	_, err := f.router.Upsert(t.Context(), viewing(calendars.Ref{Provider: "google", ID: "agent@example.test"}))
	require.NoError(t, err, "the router it came from still writes")
}
