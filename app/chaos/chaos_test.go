package chaos_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/app/chaos"
)

func TestMain(m *testing.M) {
	chaos.ServeRole(os.Args[1:])
	os.Exit(m.Run())
}

// build builds one of the repository's commands, as a deployment would.
func build(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, "github.com/bookingsaga/bookingsaga/"+pkg).CombinedOutput()
	require.NoError(t, err, "build %s: %s", pkg, out)
	return bin
}

// TestFaultsUnderLoad is the fault suite's short run: each fault once,
// under load, then recovery, one reconciliation and the checks. Its table
// goes to the test log, and to $CHAOS_REPORT when set (CI prints it).
func TestFaultsUnderLoad(t *testing.T) {
	// Unix socket paths are short: keep the data dir near the root.
	dir, err := os.MkdirTemp("", "bs-chaos-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, chaos.Options{Dir: dir, Duration: 90 * time.Second, Callers: 6, Think: 150 * time.Millisecond,
		MirrorFaultRate: 0.3, Outage: 3 * time.Second, Seed: uint64(time.Now().UnixNano()), Flooders: 8, SecondAgency: true,
		Binaries: chaos.Binaries{Worker: build(t, "worker"), Starter: build(t, "starter"), Temporal: []string{os.Args[0], chaos.TemporalRole}}})
	require.NoError(t, err)
	var table bytes.Buffer
	rep.Print(&table)
	t.Log("\n" + table.String())
	if path := os.Getenv("CHAOS_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, table.Bytes(), 0o644))
	}
	require.True(t, rep.OK(), "invariants violated:\n%s", table.String())
	require.Len(t, rep.Faults, 5, "each fault once")
	for _, f := range rep.Faults {
		require.False(t, f.Recovered.IsZero(), "no booking was confirmed after %s", f.Name)
		if strings.Contains(f.Name, "a worker and an API") {
			require.Positive(t, f.ConfirmedWhileDown, "with one worker and one API down (%s), the other pair confirmed nothing", f.Name)
		}
	}
	require.Greater(t, len(rep.Calls), 100, "the load hardly ran")
	pages := 0
	for _, c := range rep.Calls {
		if strings.HasPrefix(c.Op, "page-") {
			pages++
		}
	}
	require.Positive(t, pages, "no caller acted on their page")
	require.Positive(t, rep.Texts, "callers who agreed were texted")
	require.Positive(t, rep.Mails, "callers who agreed were e-mailed")
	require.Positive(t, rep.Meetings, "the HubSpot agency's viewings reached its account")
	require.Positive(t, rep.Contacts, "callers kept on file have a HubSpot contact")
	require.Positive(t, rep.Confirmed["default"], "the default agency's callers booked")
	require.Positive(t, rep.Confirmed["lyon"], "the second agency's callers booked")
	// A second key flooded MCP writes throughout: the callers' key was
	// kept to no less than its share (the counts are in the table).
	require.Positive(t, rep.Flood.Calls, "the flood ran")
	require.LessOrEqual(t, rep.Flood.CallerShed, rep.Flood.Shed, "the callers were shed more than the flood")
}
