package sagaclient

import (
	"context"
	"fmt"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Resend sends a call answered pending_reconciliation again, with its key,
// as it was first sent: its contact is sealed already. The key makes it
// the same call, so a saga that did get the first one answers as it did.
func (c *Client) Resend(ctx context.Context, call booking.PendingCall) (receipt.Receipt, error) {
	if err := call.Validate(); err != nil {
		return receipt.Receipt{}, fmt.Errorf("resend: %w", err)
	}
	switch call.Op {
	case booking.PendingCommit:
		return c.Commit(ctx, call.RequestKey, *call.Request)
	case booking.PendingHold:
		return c.Hold(ctx, call.RequestKey, *call.Request)
	case booking.PendingReschedule:
		return c.Reschedule(ctx, call.Replaces, call.RequestKey, *call.Request)
	default:
		return c.Cancel(ctx, call.RequestKey)
	}
}
