package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// WebhooksInput names the endpoint a dispatcher serves.
type WebhooksInput struct {
	EndpointID string
}

// webhookRuns bounds a dispatcher's history before it continues as new.
const webhookRuns = 100

// Webhooks delivers one endpoint's events, for as long as the endpoint is
// registered: each run of the delivery activity posts what is due, or
// waits a while for it; a receiver that fails is retried with backoff, up
// to a minute apart, until it answers.
func Webhooks(ctx workflow.Context, in WebhooksInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{booking.ErrTypeWebhookGone}},
	})
	for range webhookRuns {
		err := workflow.ExecuteActivity(ctx, booking.ActivityDeliverWebhooks,
			booking.WebhookInput{EndpointID: in.EndpointID, Wait: 20 * time.Second}).Get(ctx, nil)
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == booking.ErrTypeWebhookGone {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, Webhooks, in)
}
