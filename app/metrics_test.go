package app

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/workflows"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"
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
	for _, dir := range []string{"../activities", ".", "../workflows", "../api", "../api/voice", "../internal/edge"} {
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
	return append(out, workflows.SagaDriftMetric, workflows.MirrorLagMetric)
}

// Every bookingsaga_* metric is on /metrics from the start, before any
// booking, so dashboards and alerts see zeros rather than nothing: the
// worker's, and the agent API's (the dev stack serves both on one
// /metrics; in production each process serves its own).
func TestEveryMetricIsThereBeforeTheFirstBooking(t *testing.T) {
	t.Parallel()
	m := metrics.New(zap.NewNop())
	t.Cleanup(func() { _ = m.Close() })
	RegisterMetrics(m, "default", booking.TaskQueue)
	Edge(desk.New(nil, nil, desk.Options{}), EdgeConfig{Config: edge.Config{Settings: edge.Settings{Metrics: m.Scope()}}})
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	names := metricNames(t)
	require.GreaterOrEqual(t, len(names), 12)
	for _, name := range names {
		require.Contains(t, string(body), "# TYPE "+name+" ", "%s is not exported before it is first used", name)
	}
	// The zone rules in use, once the scope has reported its first
	// values (every second).
	rules := `bookingsaga_zone_rules_info{version="` + localtime.Version() + `"} 1`
	require.Eventually(t, func() bool {
		res, err := http.Get(srv.URL)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		return err == nil && strings.Contains(string(body), rules)
	}, 10*time.Second, 50*time.Millisecond, rules)
}

// The dashboard's and the alert rules' queries name only metrics the
// worker exports: bookingsaga_* ones from the source, and the SDK's.
func TestTheDashboardAndAlertsNameExportedMetrics(t *testing.T) {
	t.Parallel()
	exported := map[string]bool{}
	for _, n := range metricNames(t) {
		exported[n] = true
	}
	sdk := map[string]bool{"temporal_workflow_completed": true, "temporal_workflow_task_execution_failed": true}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile("../deploy/alerts.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, &rules))
	// promtool comes with the Debian package prometheus, which .ci/run
	// installs where it can.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		out, err := exec.Command(promtool, "check", "rules", "../deploy/alerts.yml").CombinedOutput()
		require.NoError(t, err, "promtool check rules: %s", out)
	} else {
		t.Log("promtool is not installed: the rules' syntax is not checked in this run")
	}
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert)
			exprs = append(exprs, r.Expr)
		}
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	raw, err = os.ReadFile("../deploy/grafana/dashboards/bookingsaga.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &dash))
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	require.GreaterOrEqual(t, len(exprs), 12)
	requireEveryToolCallRoute(t, exprs)
	name := regexp.MustCompile(`\b(bookingsaga|temporal)_[a-z_]+`)
	for _, e := range exprs {
		found := name.FindAllString(e, -1)
		require.NotEmpty(t, found, e)
		for _, n := range found {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
			require.True(t, exported[base] || sdk[base], "%s names %s, which the worker does not export", e, n)
		}
	}
}

// requireEveryToolCallRoute: an expression that selects the voice tool
// calls' latency by route selects every route a tool call comes in on,
// MCP's included.
func requireEveryToolCallRoute(t *testing.T, exprs []string) {
	t.Helper()
	selector := regexp.MustCompile(`request_latency_bucket\{route=~\"([^"]+)\"`)
	seen := 0
	for _, e := range exprs {
		m := selector.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		seen++
		routes := regexp.MustCompile("^(?:" + m[1] + ")$")
		for _, rt := range voice.New(nil, edge.Settings{}, voice.Config{}).Routes() {
			if rt.PerCall {
				require.True(t, routes.MatchString(rt.Path), "%s leaves out the tool calls at %s", e, rt.Path)
			}
		}
	}
	require.Equal(t, 2, seen, "the ToolCallsSlow alert and the dashboard's tool-call latency")
}

// A saga that adopts the store's answer counts it on the worker's own
// metrics, after they were made at start with zeros. The SDK tags a
// workflow's metrics with its type, so the zero must carry the same
// labels: with others, the Prometheus registry refuses the saga's series
