package catalog_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const flatCal = "flat@calendar.test"

var (
	now    = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	day    = time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC) // a Tuesday; Paris is UTC+1
	policy = booking.Policy{Version: "p1", SlotMinutes: 30, OpensAt: 9 * time.Hour, ClosesAt: 12 * time.Hour,
		HoldTTL: 10 * time.Minute, MinNotice: time.Hour}
)

type fixture struct {
	ctx     context.Context
	store   *store.Store
	fake    *gcaltest.Calendar
	catalog *catalog.Catalog
}

// setup is the catalogue over a store of its own and the flat's Google
// calendar on its fake, through the real adapter and router.
func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), fake: gcaltest.NewCalendar()}
	f.store = store.New(pgtest.New(t), store.Config{Now: func() time.Time { return now }})
	require.NoError(t, f.store.SetPolicy(f.ctx, policy))
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "flat", Kind: "property", Capacity: 1,
		TimeZone: "Europe/Paris", CalendarID: flatCal}))
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "claire", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	srv := httptest.NewServer(f.fake)
	t.Cleanup(func() { f.fake.Release(); srv.Close() })
	g, err := gcal.New(f.ctx, gcal.Config{Endpoint: srv.URL + "/calendar/v3/", NoAuth: true, CallTimeout: time.Second,
		Retry: retry.Policy{Attempts: 1, Base: time.Millisecond, Max: time.Millisecond}})
	require.NoError(t, err)
	f.catalog = &catalog.Catalog{Store: f.store, Calendar: calendars.NewRouter(map[string]calendars.Provider{"google": g})}
	return f
}

func (f *fixture) starts(t *testing.T) []string {
	t.Helper()
	av, err := f.catalog.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "flat", AgentID: "claire",
		From: day, To: day.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, policy.Version, av.PolicyVersion)
	var out []string
	for _, s := range av.Slots {
		out = append(out, s.LocalStart[len("2026-12-08T"):])
	}
	return out
}

// Availability is the store's free slots less what the calendars show
// busy; a calendar that can't be read hides nothing, and only the commit
// decides.
func TestAvailabilityIsTheStoresLessTheCalendarsBusy(t *testing.T) {
	t.Parallel()
	f := setup(t)
	all := []string{"09:00", "09:30", "10:00", "10:30", "11:00", "11:30"}
	require.Equal(t, all, f.starts(t))

	// An appointment typed into the flat's calendar, 10:00–11:00 Paris.
	f.fake.Put(flatCal, &calendar.Event{Summary: "plumber", Start: &calendar.EventDateTime{DateTime: "2026-12-08T09:00:00Z"},
		End: &calendar.EventDateTime{DateTime: "2026-12-08T10:00:00Z"}})
	require.Equal(t, []string{"09:00", "09:30", "11:00", "11:30"}, f.starts(t))

	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "freebusy.query", Times: 1, Status: http.StatusServiceUnavailable}))
	require.Equal(t, all, f.starts(t), "an unread calendar is left out, never read as busy or as an error")
}

// A decision is the store's: none is authoritative absence; a booking is
// answered with the event id its Google calendar will have.
func TestADecisionIsTheStoresAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	none, err := f.catalog.Decision(f.ctx, booking.DecisionInput{RequestKey: "k-1"})
	require.NoError(t, err)
	require.False(t, none.Found, "the store decided nothing on k-1")

	start := day.Add(9 * time.Hour)
	_, err = f.store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "k-1", ExpectedPolicyVersion: "p1",
		Intent: booking.Intent{PropertyID: "flat", AgentID: "claire", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}}})
	require.NoError(t, err)
	got, err := f.catalog.Decision(f.ctx, booking.DecisionInput{RequestKey: "k-1"})
	require.NoError(t, err)
	require.True(t, got.Booked())
	require.Equal(t, booking.StatusConfirmed, got.Booking.Status)
	require.Equal(t, gcal.EventID("k-1"), got.Booking.ProviderEventID)
	byRef, err := f.catalog.Decision(f.ctx, booking.DecisionInput{Reference: receipt.Reference("k-1")})
	require.NoError(t, err)
	require.Equal(t, got.Booking.BookingID, byRef.Booking.BookingID, "the reference a caller quotes finds the same booking")
}
