package systemtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// and the reporter panics in the workflow task.
func TestSagaDriftIsCountedBesideTheZeroMadeAtStart(t *testing.T) {
	t.Parallel()
	f := fixtureOn(t, pgtest.New(t))
	f.seed()
	m := metrics.New(zap.NewNop())
	t.Cleanup(func() { _ = m.Close() })
	app.RegisterMetrics(m, temporalServer().GetDefaultNamespace(), f.queue)
	tc, err := client.NewClientFromExisting(f.client, client.Options{Namespace: temporalServer().GetDefaultNamespace(), MetricsHandler: m.SDK()})
	require.NoError(t, err)
	w := worker.New(tc, f.queue, worker.Options{})
	app.Register(w, f.acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(t, 11))).Status)
	// Cancelled behind the saga's back; a reconciliation run tells it.
	b, err := f.acts.Store.Release(f.ctx, store.ReleaseRequest{RequestKey: key})
	require.NoError(t, err)
	require.NoError(t, f.client.SignalWorkflow(f.ctx, key, "", booking.SignalReconcile, booking.LookupOutput{Found: true, Booking: b}))
	f.eventually(func() bool { return f.state(key).State == workflows.StateCancelled }, "the saga adopts the store's cancel")

	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	f.eventually(func() bool {
		res, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		// One series, the zero made at start, now at 1.
		series := regexp.MustCompile(`(?m)^bookingsaga_saga_drift_total\{.*\} (\d+)$`).FindAllSubmatch(body, -1)
		return len(series) == 1 && string(series[0][1]) == "1"
	}, "the drift counted once, on the series made at start")
}
