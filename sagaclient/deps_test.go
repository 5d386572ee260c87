package sagaclient_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheClientLinksNeitherTheDatabaseNorGoogle: an agent backend that
// imports the client talks to Temporal only. It must not pull in pgx,
// Google's API or the activities that use them.
func TestTheClientLinksNeitherTheDatabaseNorGoogle(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "go.temporal.io/sdk/client", "the list is the real one")
	for _, dep := range deps {
		for _, banned := range []string{"github.com/jackc/pgx", "google.golang.org/api", "github.com/bookingsaga/bookingsaga/activities",
			"github.com/bookingsaga/bookingsaga/internal/store", "github.com/bookingsaga/bookingsaga/internal/gcal"} {
			require.False(t, strings.HasPrefix(dep, banned), "the client links %s", dep)
		}
	}
}
