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

// TestReplayRecordedHistories replays histories recorded from real runs
// (see worker/history_test.go). A change that makes the saga take other
// decisions for the same history fails here instead of in production.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 4, "recorded histories are missing")
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(Booking)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, file))
		})
	}
}
