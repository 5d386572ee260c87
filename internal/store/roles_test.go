package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// roles makes the three logins a split deployment has (cluster-wide, so
// tests running at once may race to make them), grants them their rights
// in this test's database as schema.Migrate does, and returns a pool for
// each.
func roles(t *testing.T) (admin *pgxpool.Pool, as func(role string) *pgxpool.Pool) {
	t.Helper()
	admin, url := pgtest.NewWithURL(t)
	ctx := t.Context()
	for _, r := range []string{"bookingsaga_worker", "bookingsaga_api", "bookingsaga_retention"} {
		_, err := admin.Exec(ctx, `DO $$ BEGIN CREATE ROLE `+r+` LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`)
		require.NoError(t, err)
	}
	_, err := admin.Exec(ctx, "SELECT bookingsaga_grant_roles()")
	require.NoError(t, err)
	return admin, func(role string) *pgxpool.Pool {
		require.Contains(t, url, "user=postgres")
		pool, err := pgxpool.New(ctx, strings.Replace(url, "user=postgres", "user="+role, 1))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
}

// rewrite tries to change the event log as retention says it may.
func rewrite(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL bookingsaga.retention = 'on'"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE booking_event SET detail = '{}'")
		return err
	})
}

// TestOnlyTheRetentionRoleRelaxesTheEventLogsGuard: the worker's and the
// API's roles book, read and seal as before, but neither can rewrite the
// event log (the setting alone no longer opens it), change the schema or
// switch the guard off; the API's deletes no booking; the retention
// role's retention runs.
func TestOnlyTheRetentionRoleRelaxesTheEventLogsGuard(t *testing.T) {
	t.Parallel()
	admin, as := roles(t)
	ctx := t.Context()
	clock := &clock{t: testNow}
	setupStore := New(admin, Config{Now: clock.Now})
	require.NoError(t, setupStore.SetPolicy(ctx, testPolicy))
	for _, r := range []booking.Resource{{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: agent(0), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}} {
		require.NoError(t, setupStore.UpsertResource(ctx, r))
	}

	worker := New(as("bookingsaga_worker"), Config{Now: clock.Now})
	_, err := worker.Commit(ctx, commitReq("req_role", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err, "the worker books")
	api := New(as("bookingsaga_api"), Config{Now: clock.Now})
	sealed, err := api.SealContact(ctx, "req_role_2", booking.Contact{Name: "Ada"})
	require.NoError(t, err, "the API seals contacts")
	require.NotNil(t, sealed)
	_, err = api.Release(ctx, ReleaseRequest{RequestKey: "req_role"})
	require.NoError(t, err, "the API cancels in the store when the saga is gone")

	for _, role := range []string{"bookingsaga_worker", "bookingsaga_api"} {
		pool := as(role)
		require.ErrorContains(t, rewrite(ctx, pool), "append-only", role)
		_, err := pool.Exec(ctx, "ALTER TABLE booking_event DISABLE TRIGGER booking_event_append_only")
		require.ErrorContains(t, err, "must be owner", role)
	}
	_, err = as("bookingsaga_api").Exec(ctx, "DELETE FROM booking")
	require.ErrorContains(t, err, "permission denied", "the API deletes no booking")

	require.NoError(t, rewrite(ctx, as("bookingsaga_retention")), "the retention role may")
	clock.Advance(3 * 365 * 24 * time.Hour)
	n, err := New(as("bookingsaga_retention"), Config{Now: clock.Now}).ApplyRetention(ctx, 10)
	require.NoError(t, err)
	require.Positive(t, n, "retention anonymised the old booking")
}
