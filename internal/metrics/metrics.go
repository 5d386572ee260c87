// Package metrics exports bookingsaga's and the Temporal SDK's metrics in
// Prometheus format, through one tally scope.
package metrics

import (
	"io"
	"net/http"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	promreporter "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Metrics owns the scope and its Prometheus registry.
type Metrics struct {
	scope    tally.Scope
	closer   io.Closer
	reporter promreporter.Reporter
}

// New builds a scope reporting into a private Prometheus registry, with
// timers as histograms (latency percentiles need buckets, not summaries).
// A series Prometheus refuses (a name seen before with other labels) is
// logged and dropped: the reporter's default is to panic, which inside a
// workflow task fails the task again on every retry.
func New(log *zap.Logger) *Metrics {
	reg := prom.NewRegistry()
	reporter := promreporter.NewReporter(promreporter.Options{Registerer: reg, DefaultTimerType: promreporter.HistogramTimerType,
		DefaultHistogramBuckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		OnRegisterError:         func(err error) { log.Error("metric series refused", zap.Error(err)) }})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{CachedReporter: reporter, Separator: promreporter.DefaultSeparator,
		SanitizeOptions: &promreporter.DefaultSanitizerOpts}, time.Second)
	m := &Metrics{scope: scope, closer: closer, reporter: reporter}
	// Which zone rules this process resolves local times with: two
	// processes on different releases turn one local time into two
	// instants, and a dashboard should show it.
	m.Scope().Tagged(map[string]string{"version": localtime.Version()}).Gauge("zone_rules_info").Update(1)
	return m
}

// Scope is where bookingsaga's own metrics go: names start "bookingsaga_".
func (m *Metrics) Scope() tally.Scope { return m.scope.SubScope("bookingsaga") }

// Handler serves the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return m.reporter.HTTPHandler() }

// Serve serves GET /metrics on addr until stop is called.
func (m *Metrics) Serve(addr string) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return httpserve.Listen(addr, "metrics", mux)
}

// Close flushes and stops reporting.
func (m *Metrics) Close() error { return m.closer.Close() }

// SDK adapts the scope for the Temporal client, so the SDK's own metrics
// (workflow task latency, activity failures, poller counts...) are
// exported beside ours.
func (m *Metrics) SDK() client.MetricsHandler { return SDKHandler(m.scope) }

// SDKHandler hands the Temporal SDK's metrics to scope.
func SDKHandler(scope tally.Scope) client.MetricsHandler { return sdkHandler{scope} }

type sdkHandler struct{ scope tally.Scope }

func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	return sdkHandler{h.scope.Tagged(tags)}
}
func (h sdkHandler) Counter(name string) client.MetricsCounter { return h.scope.Counter(name) }
func (h sdkHandler) Gauge(name string) client.MetricsGauge     { return h.scope.Gauge(name) }
func (h sdkHandler) Timer(name string) client.MetricsTimer     { return h.scope.Timer(name) }
