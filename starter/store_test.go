package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Reads of the store are answered with no Temporal at all: an operator
// listing a day's bookings during a Temporal outage still gets them.
func TestStoreReadsNeedNoTemporal(t *testing.T) {
	t.Parallel()
	_, url := pgtest.NewWithURL(t)
	dead := deadAddress(t)
	var out bytes.Buffer
	err := run(context.Background(), []string{"-temporal-address", dead, "-database-url", url,
		"bookings", "-zone", "Europe/Paris", "-day", "2026-12-01"}, &out)
	require.NoError(t, err)
	require.Equal(t, "No bookings.\n", out.String())
}

// Beside a running dev stack (its data dir in ./.bookingsaga, its cluster
// relocated when we are root under a 0700 parent), a command that reads
// the store finds it without flags; with none running it says what to do.
func TestTheCLIFindsTheDevStacksStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	dead := deadAddress(t)
	args := []string{"-temporal-address", dead, "bookings", "-zone", "Europe/Paris", "-day", "2026-12-01"}
	var out bytes.Buffer
	require.ErrorContains(t, run(ctx, args, &out), "start the dev stack here (go run ./worker -dev)")

	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: filepath.Join(dir, ".bookingsaga", "postgres")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Remove() })
	conn, err := pgx.Connect(ctx, srv.ConnString("postgres"))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE DATABASE bookingsaga")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	conn, err = pgx.Connect(ctx, srv.ConnString("bookingsaga"))
	require.NoError(t, err)
	require.NoError(t, schema.Migrate(ctx, conn))
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, run(ctx, args, &out))
	require.Equal(t, "No bookings.\n", out.String())
}

// deadAddress is a loopback port nothing listens on.
func deadAddress(t *testing.T) string {
	t.Helper()
	nobody, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, nobody.Close())
	return nobody.Addr().String()
}

// starter migrate takes the contract steps only when told the rollout is
// over; a store it finds mid-rollout keeps what the last build's workers
// still use.
func TestMigrateTakesTheContractStepsOnlyAfterTheRollout(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewAtVersion(t, 36)
	url := pool.Config().ConnString()
	ctx := t.Context()
	contracted := func() bool {
		var exists bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT to_regclass('bookingsaga_schema_after_rollout') IS NOT NULL`).Scan(&exists))
		var version int32
		if exists {
			require.NoError(t, pool.QueryRow(ctx, `SELECT version FROM bookingsaga_schema_after_rollout`).Scan(&version))
		}
		return version > 0
	}
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"migrate", "-database-url", url}, &out))
	require.Contains(t, out.String(), "(was 36)")
	require.False(t, contracted(), "the contract steps ran during the rollout")
	require.NoError(t, run(ctx, []string{"migrate", "-database-url", url, "-after-rollout"}, &out))
	require.True(t, contracted())
}
