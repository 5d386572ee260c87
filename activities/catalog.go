package activities

import (
	"context"

	"github.com/bookingsaga/bookingsaga/booking"
)

// UpsertResource creates or updates a resource; the same call twice
// changes nothing.
func (a *Activities) UpsertResource(ctx context.Context, r booking.Resource) (booking.Resource, error) {
	if err := a.Store.UpsertResource(ctx, r); err != nil {
		return booking.Resource{}, storeError("upsert resource", r.ID, err)
	}
	return r, nil
}

// SetPolicy makes a policy version current; a version's content cannot
// change once written.
func (a *Activities) SetPolicy(ctx context.Context, p booking.Policy) (booking.Policy, error) {
	if err := a.Store.SetPolicy(ctx, p); err != nil {
		return booking.Policy{}, storeError("set policy", p.Version, err)
	}
	return p, nil
}
