package deploy

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/schema"
)

// TestTheInitScriptsRolesRunTheStore runs deploy/postgres-init.sh on a
// fresh cluster as the postgres image would, migrates as the owner it
// makes (starter migrate), and then works as each process's own login:
// the worker books, the API seals a contact and changes no booking,
// neither can rewrite the event log, and only retention's process can.
func TestTheInitScriptsRolesRunTheStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, err := os.MkdirTemp("", "bookingsaga-roles-")
	require.NoError(t, err)
	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Remove() })

	script := exec.CommandContext(ctx, "sh", "postgres-init.sh")
	script.Env = append(os.Environ(), "PGHOST="+dir, "POSTGRES_USER=postgres", "BOOKINGSAGA_DB_PASSWORD=pw-owner",
		"TEMPORAL_DB_PASSWORD=pw-temporal", "BOOKINGSAGA_WORKER_DB_PASSWORD=pw-worker", "BOOKINGSAGA_API_DB_PASSWORD=pw-api",
		"BOOKINGSAGA_RETENTION_DB_PASSWORD=pw-retention")
	out, err := script.CombinedOutput()
	require.NoError(t, err, "%s", out)

	login := func(role string) string {
		return "host=" + dir + " user=" + role + " dbname=bookingsaga sslmode=disable"
	}
	from, to, err := app.Migrate(ctx, login("bookingsaga"), false)
	require.NoError(t, err, "starter migrate, as the owner, migrates and grants the others")
	require.Zero(t, from)
	workerConn, err := pgx.Connect(ctx, login("bookingsaga_worker"))
	require.NoError(t, err)
	have, want, err := schema.Versions(ctx, workerConn)
	require.NoError(t, err, "the worker reads the version it needs without owning anything")
	require.Equal(t, want, have)
	require.Equal(t, to, have)
	require.NoError(t, workerConn.Close(ctx))
	pool := func(role string) *pgxpool.Pool {
		p, err := pgxpool.New(ctx, login(role))
		require.NoError(t, err)
		t.Cleanup(p.Close)
		return p
	}

	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	worker := store.New(pool("bookingsaga_worker"), store.Config{Now: clock})
	require.NoError(t, worker.SetPolicy(ctx, booking.Policy{Version: "p1", SlotMinutes: 30, OpensAt: 8 * time.Hour, ClosesAt: 20 * time.Hour,
		HoldTTL: 10 * time.Minute}))
	for _, r := range []booking.Resource{{ID: "flat", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: "agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}} {
		require.NoError(t, worker.UpsertResource(ctx, r))
	}
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	_, err = worker.Commit(ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "k-1", ExpectedPolicyVersion: "p1",
		Intent: booking.Intent{PropertyID: "flat", AgentID: "agent", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}}})
	require.NoError(t, err, "the worker books")
	api := store.New(pool("bookingsaga_api"), store.Config{Now: clock})
	_, err = api.SealContact(ctx, "k-2", booking.Contact{Name: "Ada"}, "Europe/Paris")
	require.NoError(t, err, "the API seals contacts")
	_, err = api.Release(ctx, store.ReleaseRequest{RequestKey: "k-1"})
	require.ErrorContains(t, err, "permission denied", "the API changes no booking: a worker does")

	rewrite := func(p *pgxpool.Pool) error {
		return pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			// The default agency's events: naming none, the update would find no row to refuse.
			if _, err := tx.Exec(ctx, "SET LOCAL bookingsaga.retention = 'on'; SET LOCAL bookingsaga.agency = '1'"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE booking_event SET detail = '{}'")
			return err
		})
	}
	require.ErrorContains(t, rewrite(pool("bookingsaga_worker")), "append-only")
	require.ErrorContains(t, rewrite(pool("bookingsaga_api")), "permission denied")
	require.NoError(t, rewrite(pool("bookingsaga_retention")))

	// Retention is a process of its own, as its own role, and no other.
	cfg := app.DefaultRetentionConfig()
	cfg.Every, cfg.DatabaseURL = 0, login("bookingsaga_worker")
	require.ErrorContains(t, app.RunRetention(ctx, cfg, zap.NewNop()), "may not rewrite the event log")
	cfg.DatabaseURL = login("bookingsaga_retention")
	require.NoError(t, app.RunRetention(ctx, cfg, zap.NewNop()))
}
