package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/workflows"
)

func unavailable(context.Context) error { return errors.New("calendar 503") }

func refused(context.Context) error {
	return temporal.NewNonRetryableApplicationError("calendar 400", "MirrorRefused", nil)
}

// A local activity runs once and the saga sends it again itself, so its
// failure is the retry to count; a regular activity's first attempt is not
// one, and neither is a refusal that nothing retries.
func TestRetryCounterCountsWhatIsRetried(t *testing.T) {
	t.Parallel()
	scope := tally.NewTestScope("", nil)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&retryCounter{scope: scope}}})
	env.RegisterActivity(unavailable)
	env.RegisterActivity(refused)

	_, err := env.ExecuteLocalActivity(unavailable)
	require.Error(t, err)
	_, err = env.ExecuteLocalActivity(refused)
	require.Error(t, err)
	_, err = env.ExecuteActivity(unavailable)
	require.Error(t, err)

	counts := map[string]int64{}
	for _, c := range scope.Snapshot().Counters() {
		counts[c.Tags()["activity"]] += c.Value()
	}
	require.Equal(t, map[string]int64{"unavailable": 1}, counts)
}

// metricNames are the bookingsaga_* families the source creates: every
// literal name given to Counter, Gauge or Timer, with the scope's prefix.
func metricNames(t *testing.T) []string {
	t.Helper()
	var out []string
	re := regexp.MustCompile(`\.(Counter|Gauge|Timer)\("([a-z_]+)"\)`)
	for _, dir := range []string{"../../activities", ".", "../../workflows"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				out = append(out, "bookingsaga_"+strings.TrimPrefix(m[2], "bookingsaga_"))
			}
		}
	}
	return append(out, workflows.SagaDriftMetric)
}

// Every bookingsaga_* metric is on /metrics from the start, before any
// booking, so dashboards and alerts see zeros rather than nothing.
func TestEveryMetricIsThereBeforeTheFirstBooking(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	t.Cleanup(func() { _ = m.Close() })
	registerMetrics(m)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	names := metricNames(t)
	require.GreaterOrEqual(t, len(names), 9)
	for _, name := range names {
		require.Contains(t, string(body), "# TYPE "+name+" ", "%s is not exported before it is first used", name)
	}
}
