package activities_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The activities speak the calendar mirror in the project's own terms
// (internal/calendars): no provider's library or adapter is linked into
// them, so a second provider needs no change here.
func TestTheActivitiesLinkNoCalendarProvider(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/bookingsaga/bookingsaga/internal/calendars", "the list is the real one")
	for _, dep := range deps {
		for _, banned := range []string{"google.golang.org/api/calendar", "github.com/bookingsaga/bookingsaga/internal/gcal"} {
			require.False(t, strings.HasPrefix(dep, banned), "the activities link %s", dep)
		}
	}
}
