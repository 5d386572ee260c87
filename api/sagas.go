package api

import (
	"context"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The bookings' door as the edge holds it: *desk.Desk implements Calls
// and Sagas, and the wiring passes it in. As ports, the edge links no
// Temporal package and no store: the saga client under the desk is the
// one place that speaks Temporal and translates its errors.

// Calls are the booking calls both edges make, each within the commit
// wait and a margin, and the conversation's pending rule (Pick, BookIn).
type Calls interface {
	Commit(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error)
	Hold(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error)
	Status(ctx context.Context, key string) (receipt.Receipt, error)
	ByReference(ctx context.Context, ref string) (receipt.Receipt, error)
	Cancel(ctx context.Context, key string) (receipt.Receipt, error)
	Reschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error)
	Pick(ctx context.Context, conv string, in booking.Intent) (string, error)
	BookIn(ctx context.Context, conv string, in booking.Intent,
		call func(ctx context.Context, key string) (receipt.Receipt, error)) (string, receipt.Receipt, error)
}

// Sagas are the calls with what the REST routes add: a booking call's
// whole budget, the operator's attention list, and webhook dispatchers.
type Sagas interface {
	Calls
	Bound(ctx context.Context) (context.Context, context.CancelFunc)
	Attention(ctx context.Context) (booking.Attention, error)
	StartWebhooks(ctx context.Context, endpointID string) error
}
