package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// TestTheAPIPoolTakesItsSizeFromTheURL: pool_max_conns in the database
// URL sizes the API's pool; without it the pool has room for reads and
// contact seals at once.
func TestTheAPIPoolTakesItsSizeFromTheURL(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.NewWithURL(t)
	ctx := t.Context()
	for want, u := range map[int32]string{25: dbURL + sep(dbURL) + "pool_max_conns=25", DefaultAPIConns: dbURL} {
		r, err := OpenReads(ctx, u, Mirrors{}, zap.NewNop())
		require.NoError(t, err)
		require.Equal(t, want, r.pool.Config().MaxConns, u)
		r.Close()
	}
}

// sep is what comes before one more setting in u, a URL or a DSN.
func sep(u string) string {
	switch {
	case !strings.Contains(u, "://"):
		return " "
	case strings.Contains(u, "?"):
		return "&"
	}
	return "?"
}
