package app

import (
	"context"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/uber-go/tally/v4"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// RegisterMetrics makes every bookingsaga_* series exist at start, at
// zero: the activities', the retry counter's per activity, the pending
// gauge, and the sagas' own (reported through the SDK).
func RegisterMetrics(m *metrics.Metrics, namespace, queue string) {
	activities.RegisterMetrics(m.Scope())
	for _, name := range []string{booking.ActivityCommit, booking.ActivityConfirm, booking.ActivityLookup, booking.ActivityRelease,
		booking.ActivitySyncCalendar, booking.ActivitySyncCRM, booking.ActivityDeliverWebhooks} {
		m.Scope().Tagged(map[string]string{"activity": name}).Counter("activity_retries_total").Inc(0)
	}
	m.Scope().Gauge("pending_reconciliation").Update(0)
	saga := m.SDK().WithTags(sagaTags(namespace, queue))
	saga.Counter(workflows.SagaDriftMetric).Inc(0)
	for _, mirror := range []string{"calendar", "crm"} {
		saga.WithTags(map[string]string{"mirror": mirror}).Timer(workflows.MirrorLagMetric)
	}
}

// sagaTags are the labels the SDK gives a saga's metrics: its root tags
// (go.temporal.io/sdk internal/common/metrics.RootTags) with the worker's
// namespace and queue and the workflow's type. The zero must carry the
// same label names, or Prometheus refuses the saga's own series.
func sagaTags(namespace, queue string) map[string]string {
	return map[string]string{"namespace": namespace, "client_name": "temporal_go", "worker_type": "none",
		"workflow_type": booking.BookingWorkflowName, "activity_type": "none", "task_queue": queue}
}

// watchPending keeps a gauge of sagas whose outcome is unknown (answered
// pending_reconciliation), from Temporal's visibility, until ctx ends. It
// is the task queue's total, the same from every worker: aggregate with
// max, not sum.
func watchPending(ctx context.Context, c client.Client, queue string, scope tally.Scope, log *zap.Logger) {
	gauge := scope.Gauge("pending_reconciliation")
	query := visibility.PendingQuery(queue)
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := c.CountWorkflow(cctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		cancel()
		if err == nil {
			gauge.Update(float64(res.GetCount()))
		} else if ctx.Err() == nil {
			log.Warn("pending count unavailable", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// retryCounter counts activity retries, per activity.
type retryCounter struct {
	interceptor.WorkerInterceptorBase
	scope tally.Scope
}

func (r *retryCounter) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &retryCounterActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, scope: r.scope}
}

type retryCounterActivity struct {
	interceptor.ActivityInboundInterceptorBase
	scope tally.Scope
}

// ExecuteActivity counts an attempt after the first. A local activity
// runs once (the commit, a mirror's first try) and the saga itself sends
// it again, as a new attempt 1: its failure, unless final, is counted as
// the retry it leads to.
func (a *retryCounterActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	if info.Attempt > 1 {
		a.count(info)
	}
	out, err := a.Next.ExecuteActivity(ctx, in)
	if info.IsLocalActivity && workflows.Retryable(err) {
		a.count(info)
	}
	return out, err
}

func (a *retryCounterActivity) count(info activity.Info) {
	a.scope.Tagged(map[string]string{"activity": info.ActivityType.Name}).Counter("activity_retries_total").Inc(1)
}
