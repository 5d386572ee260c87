package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testNow is the fixture's "now": a Monday morning before the test days.
var testNow = time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	store *Store
	pool  *pgxpool.Pool
	clock *clock
	ctx   context.Context
}

var testPolicy = booking.Policy{
	Version: "showing-policy-1", SlotMinutes: 30, OpensAt: 8 * time.Hour, ClosesAt: 20 * time.Hour,
	HoldTTL: 10 * time.Minute, MinNotice: time.Hour,
}

// setup gives a store on its own database with a policy in force and a few
// resources: paris (capacity 1), duo (capacity 2), ny, agents, a key holder.
func setup(t testing.TB) *fixture {
	t.Helper()
	pool := pgtest.New(t)
	f := &fixture{pool: pool, clock: &clock{t: testNow}, ctx: context.Background()}
	f.store = New(pool, Config{Now: f.clock.Now})
	require.NoError(t, f.store.SetPolicy(f.ctx, testPolicy))
	for _, r := range []booking.Resource{
		{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: "duo", Kind: "property", Capacity: 2, TimeZone: "Europe/Paris"},
		{ID: "ny", Kind: "property", Capacity: 1, TimeZone: "America/New_York"},
		{ID: "keys", Kind: "key_holder", Capacity: 1, TimeZone: "Europe/Paris"},
	} {
		require.NoError(t, f.store.UpsertResource(f.ctx, r))
	}
	for i := range 40 {
		require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: agent(i), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	}
	return f
}

func agent(i int) string { return fmt.Sprintf("agent-%02d", i) }

// paris returns an instant on 2026-12-08 (a Tuesday) at hh:mm Paris time (UTC+1).
func paris(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02T15:04 -07:00", "2026-12-08T"+hhmm+" +01:00")
	if err != nil {
		panic(err)
	}
	return t
}

func intent(property, agentID, from, to string, extras ...string) booking.Intent {
	return booking.Intent{PropertyID: property, AgentID: agentID, ExtraResources: extras,
		StartsAt: paris(from), EndsAt: paris(to), TimeZone: "Europe/Paris"}
}

// moving is in as the reschedule of the booking under replaces.
func moving(replaces string, in booking.Intent) booking.Intent {
	in.Replaces = replaces
	return in
}

func commitReq(key string, in booking.Intent) CommitRequest {
	return CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: key, Intent: in, ExpectedPolicyVersion: testPolicy.Version}}
}

// count returns the number of rows in each table that commits write.
func (f *fixture) count(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"booking", "booking_resource", "booking_event", "booking_contact", "resource", "policy"} {
		var n int
		require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM "+table).Scan(&n))
		out[table] = n
	}
	return out
}

func requireCode(t testing.TB, err error, code booking.Code) {
	t.Helper()
	var r *booking.Rejection
	require.True(t, errors.As(err, &r), "want rejection %s, got %v", code, err)
	require.Equal(t, code, r.Code, "message: %s", r.Message)
}

// held holds in under key (a select_slot with hold), failing the test on
// an error.
func (f *fixture) held(t testing.TB, key string, in booking.Intent) Outcome {
	t.Helper()
	req := commitReq(key, in)
	req.Hold = true
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	return out
}

// booked commits in under key, the arrangement most tests start from, and
// fails the test on an error.
func (f *fixture) booked(t testing.TB, key string, in booking.Intent) Outcome {
	t.Helper()
	out, err := f.store.Commit(f.ctx, commitReq(key, in))
	require.NoError(t, err)
	return out
}

// Every process's pool runs with PostgreSQL's JIT off (PoolConfig), unless
// the URL sets it: JIT made the commit's occupancy read 45 times slower.
func TestTheStoresPoolRunsWithoutJIT(t *testing.T) {
	t.Parallel()
	_, url := pgtest.NewWithURL(t)
	for dsn, want := range map[string]string{url: "off", url + " jit=on": "on"} {
		pc, err := PoolConfig(dsn)
		require.NoError(t, err)
		pool, err := pgxpool.NewWithConfig(t.Context(), pc)
		require.NoError(t, err)
		var jit string
		require.NoError(t, pool.QueryRow(t.Context(), "SHOW jit").Scan(&jit))
		pool.Close()
		require.Equal(t, want, jit, dsn)
	}
}
