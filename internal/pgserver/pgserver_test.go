package pgserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// setup starts a cluster for dir and stops it when the test ends.
func setup(t *testing.T, dir string) *Server {
	t.Helper()
	srv, err := Start(context.Background(), Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Remove() })
	return srv
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	require.NoError(t, err)
}

func hasTable(t *testing.T, url, table string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var found bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&found))
	return found
}

// A data dir wiped by hand is a fresh cluster, also when (as root, under a
// 0700 parent such as t.TempDir) the cluster lives elsewhere: a new dir at
// the same path never adopts the old dir's data. A restart without the
// wipe finds its data again.
func TestAWipedDataDirGetsAFreshCluster(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "postgres")
	first := setup(t, dir)
	execSQL(t, first.ConnString("postgres"), "CREATE TABLE booked_before_the_wipe ()")
	url, err := Running(dir, "postgres")
	require.NoError(t, err)
	require.Equal(t, first.ConnString("postgres"), url, "Running follows the cluster's location")
	first.Stop()
	_, err = Running(dir, "postgres")
	require.ErrorContains(t, err, "no postgresql runs for "+dir)

	again := setup(t, dir)
	require.True(t, hasTable(t, again.ConnString("postgres"), "booked_before_the_wipe"), "a restart lost its data")
	again.Stop()

	require.NoError(t, os.RemoveAll(dir))
	fresh := setup(t, dir)
	require.False(t, hasTable(t, fresh.ConnString("postgres"), "booked_before_the_wipe"), "the wiped dir adopted the old cluster")
}
