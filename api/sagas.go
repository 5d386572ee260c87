package api

import (
	"context"

	"github.com/bookingsaga/bookingsaga/internal/edge"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Sagas are the desk's calls with what the REST routes add: a booking call's
// whole budget, the operator's attention list, and webhook dispatchers.
type Sagas interface {
	edge.Calls
	Bound(ctx context.Context) (context.Context, context.CancelFunc)
	Attention(ctx context.Context) (booking.Attention, error)
	StartWebhooks(ctx context.Context, endpointID string) error
}
