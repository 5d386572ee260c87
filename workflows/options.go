package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The activity options of the saga: how long each kind of call may take,
// and how it is retried.

// commitCtx runs one commit attempt as a local activity: it runs in the
// worker that holds the update, without a round trip through the task
// queue, which is most of a voice caller's wait. Its timeout is the
// caller's wait, so the attempt itself bounds it. It is not retried by
// Temporal: a failed attempt has an unknown outcome, and runCommit looks it
// up before sending the same key again.
func commitCtx(ctx workflow.Context, wait time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: wait,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// storeCtx runs lookups and releases until the store answers.
func storeCtx(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second},
	})
}

// mirrorCtx retries a calendar or CRM write that failed its first try.
// They are copies: a failure is retried for an hour, then left to the
// reconciliation schedule, and never touches the booking.
func mirrorCtx(ctx workflow.Context, attempt time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    attempt,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 5 * time.Minute, NonRetryableErrorTypes: []string{booking.ErrTypeMirrorRefused}},
	})
}

// firstTryCtx runs a mirror's first try as a local activity, once: its
// retries are mirrorCtx's, with the workflow task released.
func firstTryCtx(ctx workflow.Context, limit time.Duration) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: limit,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}
