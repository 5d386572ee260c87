package workflows

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnUnguardedChangeFailsTheKeptHistories shows why changeFinalRead is
// behind workflow.GetVersion: the same change with its guard taken out
// (the file swapped in through go's -overlay) makes the saga take another
// decision in a history v0.1.0 recorded, and the replay fails.
func TestAnUnguardedChangeFailsTheKeptHistories(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("booking.go")
	require.NoError(t, err)
	guard := "workflow.GetVersion(ctx, changeFinalRead, workflow.DefaultVersion, 1) == 1"
	require.Contains(t, string(src), guard)
	dir := t.TempDir()
	unguarded := filepath.Join(dir, "booking.go")
	require.NoError(t, os.WriteFile(unguarded, []byte(strings.Replace(string(src), guard, "true", 1)), 0o644))
	abs, err := filepath.Abs("booking.go")
	require.NoError(t, err)
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{abs: unguarded}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644))

	cmd := exec.Command("go", "test", "-count=1", "-overlay", filepath.Join(dir, "overlay.json"),
		"-run", "TestReplayKeptHistories/v0.1.0/viewing_ended", ".")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the replay passed without the guard: %s", out)
	require.Contains(t, string(out), "nondeterministic", "the replay failed for another reason: %s", out)
}
