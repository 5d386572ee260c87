package catalog

import (
	"context"

	"github.com/bookingsaga/bookingsaga/booking"
)

// RequestHandoff records a caller's request for a person, once.
func (c *Catalog) RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, bool, error) {
	return c.Store.RequestHandoff(ctx, h)
}

// OpenHandoffs lists the requests for a person no one has resolved.
func (c *Catalog) OpenHandoffs(ctx context.Context) ([]booking.Handoff, error) {
	return c.Store.OpenHandoffs(ctx)
}

// ResolveHandoff closes a handoff once the caller was called back.
func (c *Catalog) ResolveHandoff(ctx context.Context, id int64, note string) (booking.Handoff, error) {
	return c.Store.ResolveHandoff(ctx, id, note)
}

// ReconcileFailures are the reconciliation steps whose last run failed.
func (c *Catalog) ReconcileFailures(ctx context.Context) ([]booking.StepFailure, error) {
	return c.Store.ReconcileFailures(ctx)
}
