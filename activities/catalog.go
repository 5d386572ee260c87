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

// Availability lists free slots: the store's, less those that the
// resources' calendars show busy (events written past the service). It is
// an offer, not a promise: only the commit decides.
func (a *Activities) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	av, err := a.Store.Availability(ctx, q)
	if err != nil {
		return booking.Availability{}, storeError("availability", q.PropertyID, err)
	}
	ids := append([]string{q.PropertyID, q.AgentID}, q.ExtraResources...)
	blocks, _ := a.calendarBlocks(ctx, ids, q.From, q.To)
	free := av.Slots[:0]
	for _, s := range av.Slots {
		if len(blocked(blocks, s.StartsAt, s.EndsAt)) == 0 {
			free = append(free, s)
		}
	}
	av.Slots = free
	return av, nil
}
