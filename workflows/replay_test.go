package workflows

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// TestReplayKeptHistories replays every history kept in testdata/<build>,
// recorded from real runs of each released build (internal/app's record).
// Sagas stay open until the viewing, for weeks, so a worker of this build
// will resume sagas any earlier build started: a change that makes the saga
// take other decisions for the same history fails here, and goes behind
// workflow.GetVersion, instead of failing those sagas in production.
func TestReplayKeptHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	require.NoError(t, err)
	first, err := filepath.Glob(filepath.Join("testdata", "v0.1.0", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(first), 6, "the first release's histories are missing")
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(Booking)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, file))
		})
	}
}
