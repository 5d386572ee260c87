package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeProc writes a /proc tree of one process per entry: pid, comm,
// parent, utime, stime, cutime, cstime, as Linux lays out its stat line.
func writeProc(t *testing.T, procs [][7]any) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p[0]))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		line := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 1 0 100 1000 10\n", p[0], p[1], p[2], p[3], p[4], p[5], p[6])
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "self"), 0o755)) // not a pid: skipped
	return root
}

// Each process counts once, under its nearest named ancestor; a named
// process adds the children it reaped (a postmaster's exited backends);
// a name with spaces and parentheses doesn't shift the fields.
func TestEachProcessCountsOnceUnderItsNearestName(t *testing.T) {
	t.Parallel()
	root := writeProc(t, [][7]any{
		{10, "worker", 1, 100, 50, 5, 5},
		{11, "temporal (embedded) x", 10, 20, 20, 0, 0},
		{12, "grandchild", 11, 7, 3, 0, 0},
		{20, "postgres", 10, 40, 10, 300, 100}, // started by the worker, named on its own
		{21, "postgres: backend", 20, 30, 0, 0, 0},
		{30, "unrelated", 1, 999, 999, 0, 0},
	})
	p, err := parseProcesses(root, "dev=10, postgres=20")
	require.NoError(t, err)
	got := p.sample()
	require.InDelta(t, 10*float64(150+10+40+10), got["dev"], 1e-9)
	require.InDelta(t, 10*float64(50+400+30), got["postgres"], 1e-9)
	require.Zero(t, got["soak"], "the test's own pid is not in this tree")
	require.Equal(t, []string{"soak 0.0", "dev 5.0", "postgres 2.0"},
		p.costs(map[string]float64{"dev": 100, "postgres": 40}, map[string]float64{"dev": 600, "postgres": 240}, 100))
}

func TestProcessesAreNamedOnce(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"dev", "dev=x", "=12", "dev=0", "dev=1,dev=2", "soak=3"} {
		_, err := parseProcesses("/proc", bad)
		require.Error(t, err, bad)
	}
}
