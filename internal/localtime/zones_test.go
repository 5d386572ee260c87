package localtime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// childEnv marks the test binary re-run as a process whose host zone data
// (ZONEINFO) holds British Columbia's rules before its move to year-round
// UTC−7 (tzdata 2025b): what the host's data would say, were it read.
const childEnv = "LOCALTIME_TEST_RESOLVE"

func TestTheBuildsZoneRulesNotTheHosts(t *testing.T) {
	if local := os.Getenv(childEnv); local != "" {
		at, err := localtime.Parse(local, "America/Vancouver")
		require.NoError(t, err)
		os.Stdout.WriteString("resolved=" + at.UTC().Format(time.RFC3339) + "\n")
		return
	}
	t.Parallel()
	host, err := filepath.Abs("testdata/host-2025b")
	require.NoError(t, err)
	old, err := os.ReadFile(filepath.Join(host, "America/Vancouver"))
	require.NoError(t, err)
	oldLoc, err := time.LoadLocationFromTZData("America/Vancouver", old)
	require.NoError(t, err)
	require.Equal(t, "2026-12-08T18:00:00Z", time.Date(2026, 12, 8, 10, 0, 0, 0, oldLoc).UTC().Format(time.RFC3339),
		"the fixture must hold the old rule, or this test proves nothing")

	cmd := exec.Command(os.Args[0], "-test.run", "^TestTheBuildsZoneRulesNotTheHosts$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=2026-12-08T10:00", "ZONEINFO="+host)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "resolved=2026-12-08T17:00:00Z", "10:00 in Vancouver in December 2026 is UTC−7 by the current rules")
}

func TestTheZoneDatabaseIsTheToolchains(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	root := strings.TrimSpace(string(out))
	want, err := os.ReadFile(filepath.Join(root, "lib", "time", "zoneinfo.zip"))
	require.NoError(t, err)
	got, err := os.ReadFile("zoneinfo.zip")
	require.NoError(t, err)
	require.True(t, string(want) == string(got), "the toolchain's zone database changed: run go generate ./internal/localtime")

	script, err := os.ReadFile(filepath.Join(root, "lib", "time", "update.bash"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^DATA=(\S+)$`).FindSubmatch(script)
	require.NotNil(t, m)
	require.Equal(t, string(m[1]), localtime.Version())
	require.Regexp(t, `^\d{4}[a-z]$`, localtime.Version())
}

func TestLoadZoneRefusesWhatIsNotAZone(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "Local", "Mars/Olympus", "../../etc/passwd", "america/vancouver"} {
		_, err := localtime.LoadZone(name)
		require.ErrorIs(t, err, localtime.ErrUnknownZone, name)
	}
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	require.Equal(t, "Europe/Paris", loc.String())
}

// The README and the time page name the release in use.
func TestTheDocsNameTheZoneRulesInUse(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"../../README.md", "../../docs/time.md"} {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		require.Contains(t, string(text), localtime.Version(), "%s names the zone rules in use", page)
	}
}
