package hubspot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/crm/crmcontract"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// fixture is the adapter on an account of its own, whose retries wait on
// the fake's clock rather than the wall's.
type fixture struct {
	fake  *hubspottest.Account
	url   string
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{fake: hubspottest.New("pat-na1-test"), now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	f.fake.Now = f.clock
	srv := httptest.NewServer(f.fake)
	t.Cleanup(func() { f.fake.Release(); srv.Close() })
	f.url = srv.URL
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) client(t *testing.T, token string) *Client {
	t.Helper()
	wait := func(_ context.Context, d time.Duration) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.now, f.waits = f.now.Add(d), append(f.waits, d)
		return nil
	}
	// The fake's own limit stands; the adapter's would only slow the
	// tests on the wall clock.
	c, err := New(Config{BaseURL: f.url, Token: token, Timeout: time.Second, PerTenSeconds: 1000,
		Retry: retry.Policy{Attempts: 3, Base: time.Millisecond, Max: time.Hour, Sleep: wait}})
	require.NoError(t, err)
	return c
}

func TestHubSpotKeepsTheCRMContract(t *testing.T) {
	t.Parallel()
	crmcontract.Run(t, func(t *testing.T) crmcontract.Fake {
		f := setup(t)
		return crmcontract.Fake{CRM: f.client(t, "pat-na1-test"), WrongToken: f.client(t, "pat-na1-wrong"), UpsertOp: "meetings.upsert",
			Inject: f.fake.Inject, Calls: f.fake.Calls, Count: func() int { return len(f.fake.Meetings()) },
			Delete: func(id string) { f.fake.Delete(propBookingID, id) }}
	})
}

func viewing() crm.Viewing {
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	return crm.Viewing{BookingID: "b-1", RequestKey: "k-1", PropertyRef: "paris-11", AgentRef: "agent-00",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris", Status: crm.StatusScheduled,
		Title: "Visite : Paris 11e avec Claire"}
}

// Staff see a meeting: its times, title and outcome in HubSpot's own
// fields; a status changed by hand there reads back as changed, so
// reconciliation puts it right.
func TestAViewingIsAMeetingStaffCanRead(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	v := viewing()
	v.Outcome = "no_show"
	_, err := c.Upsert(ctx, v, 0)
	require.NoError(t, err)
	m := f.fake.Meetings()
	require.Len(t, m, 1)
	require.Equal(t, "2026-12-08T09:00:00.000Z", m[0].Properties["hs_meeting_start_time"])
	require.Equal(t, "2026-12-08T09:30:00.000Z", m[0].Properties["hs_meeting_end_time"])
	require.Equal(t, "NO_SHOW", m[0].Properties["hs_meeting_outcome"])
	require.Equal(t, "Visite : Paris 11e avec Claire", m[0].Properties["hs_meeting_title"])

	f.fake.Edit(propBookingID, "b-1", map[string]string{"hs_meeting_outcome": "COMPLETED"})
	got, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	require.Equal(t, "attended", got.Outcome, "changed by hand, read as changed")
	require.NotEqual(t, v, got.Viewing)
}

// A 429 waits as long as HubSpot's policy says: the ten-second window's
// interval, then the write lands.
func TestATenSecondLimitIsWaitedOut(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fake.PerTenSeconds = 9 // the schema's nine calls fill the window
	c := f.client(t, "pat-na1-test")
	_, err := c.Upsert(context.Background(), viewing(), 0)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{10 * time.Second}, f.waits, "the interval HubSpot states")
	require.Len(t, f.fake.Meetings(), 1)
}

// Once the day's calls are within the reserve, reconciliation's reads
// wait for tomorrow and bookings' writes go on.
func TestTheDaysReserveIsKeptForBookings(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fake.Daily = 11
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	_, err := c.Upsert(ctx, viewing(), 0) // the schema's nine calls and the write: one remains, within 10 %
	require.NoError(t, err)
	_, err = c.Get(ctx, "b-1")
	require.Error(t, err)
	require.False(t, crm.Permanent(err), "not final: %v", err)
	var se *crm.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, time.Hour, se.RetryAfter)
	require.Zero(t, f.fake.Calls("meetings.get"), "not sent")
	v := viewing().Cancelled()
	_, err = c.Upsert(ctx, v, 0)
	require.NoError(t, err, "a booking's write still goes")
	require.Equal(t, "CANCELED", f.fake.Meetings()[0].Properties["hs_meeting_outcome"])
}

func TestBadConfigurationIsRefused(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{BaseURL: "api.hubapi.com", Token: "t", Timeout: time.Second},
		{BaseURL: DefaultBaseURL, Timeout: time.Second},
		{BaseURL: DefaultBaseURL, Token: "t"},
		{BaseURL: DefaultBaseURL, Token: "t", Timeout: time.Second, DailyReserve: 1},
	} {
		_, err := New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
	var se *crm.StatusError
	res := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	require.ErrorAs(t, statusError(res, []byte(`{"status":"error","policyName":"DAILY"}`)), &se)
	require.Equal(t, time.Hour, se.RetryAfter)
}
