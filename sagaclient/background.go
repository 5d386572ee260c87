package sagaclient

import (
	"context"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ReconcileNow triggers the reconciliation schedule: at once, or right
// after the run under way (the schedule itself skips overlapping runs; an
// operator's request is queued rather than dropped).
func (c *Client) ReconcileNow(ctx context.Context) error {
	err := c.tc.ScheduleClient().GetHandle(ctx, booking.ReconcileScheduleID).Trigger(ctx,
		client.ScheduleTriggerOptions{Overlap: enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE})
	if err != nil {
		return fmt.Errorf("trigger %s: %w", booking.ReconcileScheduleID, err)
	}
	return nil
}

// StartWebhooks makes sure the dispatcher of a webhook endpoint runs; one
// already running is left as it is.
func (c *Client) StartWebhooks(ctx context.Context, endpointID string) error {
	_, err := c.tc.ExecuteWorkflow(ctx, joined(ctx, booking.WebhooksIDPrefix+endpointID, c.opts.TaskQueue),
		booking.WebhooksWorkflowName, workflows.WebhooksInput{EndpointID: endpointID})
	if err != nil {
		return fmt.Errorf("start webhooks %s: %w", endpointID, err)
	}
	return nil
}
