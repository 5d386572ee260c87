package systemtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// A conflict is a business answer, not a failure: the SDK neither counts
// the commit that found it as a failed local activity nor logs an error.
func TestAConflictIsNeitherAFailedActivityNorAnErrorLog(t *testing.T) {
	t.Parallel()
	f := setup(t)
	scope := tally.NewTestScope("", nil)
	core, logs := observer.New(zapcore.WarnLevel)
	c := temporalServer().NewClientWithOptions(client.Options{MetricsHandler: metrics.SDKHandler(scope), Logger: zaplog.New(zap.New(core))})
	queue := f.queue + "-observed"
	w := worker.New(c, queue, worker.Options{})
	app.Register(w, f.acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	sc := desk.New(c, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: queue, Settings: f.settings}})

	first, err := sc.Commit(f.ctx, uuid.NewString(), commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, first.Status)
	second, err := sc.Commit(f.ctx, uuid.NewString(), commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConflict, second.Status)

	// The SDK counts a local activity's failure before the workflow sees
	// its result, so the counts are complete once the receipt is back.
	for _, ctr := range scope.Snapshot().Counters() {
		if strings.Contains(ctr.Name(), "failed") && ctr.Tags()["activity_type"] == "Commit" {
			require.Zero(t, ctr.Value(), "%s counted the conflict as a failure", ctr.Name())
		}
	}
	require.NotEmpty(t, scope.Snapshot().Timers(), "the SDK reported to this scope")
	for _, e := range logs.All() {
		require.NotContains(t, fmt.Sprint(e.Message, e.ContextMap()), "slot is taken", "logged at %s", e.Level)
	}
}
