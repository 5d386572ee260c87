package app

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
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
