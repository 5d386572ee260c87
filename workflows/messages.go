package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// messageRuns bounds the sender's history before it continues as new.
const messageRuns = 100

// CallerMessages sends the callers' messages for as long as it runs (one
// run per task queue, started by the worker): each run of the send
// activity sends what is due or waits a while for it; a provider that
// fails is retried with backoff, up to a minute apart. The outbox is the
// store's, so a message no run has sent yet is still there.
func CallerMessages(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    15 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	for range messageRuns {
		if err := workflow.ExecuteActivity(ctx, booking.ActivitySendMessages, booking.MessagesInput{Wait: 20 * time.Second}).Get(ctx, nil); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, CallerMessages)
}
