package store

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// catalogue gives the agency of ctx the test policy and its resources.
func catalogue(t *testing.T, ctx context.Context, st *Store) {
	t.Helper()
	require.NoError(t, st.SetPolicy(ctx, testPolicy))
	for _, r := range []booking.Resource{{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: agent(0), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}} {
		require.NoError(t, st.UpsertResource(ctx, r))
	}
}

// count is how many rows of table a bare SELECT finds through st, with no
// agency in its WHERE.
func count(t *testing.T, ctx context.Context, st *Store, table string) int {
	t.Helper()
	var n int
	require.NoError(t, st.pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// Two agencies on one store: under the worker's and the API's roles, a
// query that forgets its agency finds only its own agency's rows, a
// connection that names no agency finds none, and one request_key in
// both agencies makes two independent bookings of the same slot.
func TestAnAgencyFindsNothingOfAnothers(t *testing.T) {
	t.Parallel()
	owner, as := roles(t)
	ctx := t.Context()
	var lyon int
	require.NoError(t, owner.QueryRow(ctx, "INSERT INTO agency (agency_id, name) VALUES ('lyon', 'Lyon') RETURNING agency_no").Scan(&lyon))
	paris, other := ctx, agency.With(ctx, agency.Agency{No: lyon, ID: "lyon"})
	clock := &clock{t: testNow}
	worker := New(as("bookingsaga_worker"), Config{Now: clock.Now})
	catalogue(t, paris, worker)
	catalogue(t, other, worker)
	req := commitReq("req_same", intent("paris", agent(0), "10:00", "10:30"))
	for _, c := range []context.Context{paris, other} {
		out, err := worker.Commit(c, req)
		require.NoError(t, err)
		require.Equal(t, booking.StatusConfirmed, out.Booking.Status, "the same key and slot, each agency's own")
	}
	only := commitReq("req_paris_only", intent("paris", agent(0), "11:00", "11:30"))
	_, err := worker.Commit(paris, only)
	require.NoError(t, err)

	for _, role := range []string{"bookingsaga_worker", "bookingsaga_api"} {
		pool := as(role)
		st := New(pool, Config{Now: clock.Now})
		for table, want := range map[string][2]int{"booking": {2, 1}, "booking_event": {events(t, owner, 1), events(t, owner, lyon)},
			"resource": {2, 2}, "policy": {1, 1}} {
			require.Equal(t, want[0], count(t, paris, st, table), "%s as %s in the default agency", table, role)
			require.Equal(t, want[1], count(t, other, st, table), "%s as %s in lyon", table, role)
		}
		_, err := st.Lookup(other, "req_paris_only")
		require.ErrorIs(t, err, booking.ErrNotFound, "%s reads another agency's booking", role)
		require.Zero(t, unnamed(t, pool), "%s, naming no agency, finds rows", role)
	}
}

// events counts the event rows of agency no, as the schema's owner reads
// them naming that agency; there are some.
func events(t *testing.T, owner *pgxpool.Pool, no int) int {
	t.Helper()
	var n int
	require.NoError(t, pgx.BeginFunc(t.Context(), owner, func(tx pgx.Tx) error {
		if _, err := tx.Exec(t.Context(), "SELECT set_config('bookingsaga.agency', $1::int::text, true)", no); err != nil {
			return err
		}
		return tx.QueryRow(t.Context(), "SELECT count(*) FROM booking_event WHERE agency_no = $1", no).Scan(&n)
	}))
	require.NotZero(t, n, "agency %d has no events", no)
	return n
}

// unnamed counts the bookings a connection finds when it names no agency.
func unnamed(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM booking").Scan(&n))
	return n
}

// A login that passes row-level security serves one agency, never two.
func TestALoginThatPassesThePoliciesServesOneAgencyOnly(t *testing.T) {
	t.Parallel()
	owner, url := pgtest.NewWithURL(t)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.User = "postgres" // the throwaway cluster's superuser
	super, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(super.Close)
	ctx := t.Context()
	for _, pool := range []*pgxpool.Pool{owner, super} {
		require.NoError(t, New(pool, Config{}).CheckIsolation(ctx), "one agency")
	}
	_, err = owner.Exec(ctx, "INSERT INTO agency (agency_id) VALUES ('lyon')")
	require.NoError(t, err)
	require.NoError(t, New(owner, Config{}).CheckIsolation(ctx), "the owner meets the policies")
	require.ErrorContains(t, New(super, Config{}).CheckIsolation(ctx), `the database login "postgres" passes row-level security`)
}
