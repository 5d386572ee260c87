package activities

import (
	"context"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The catalogue's activities serve the Catalog workflow, through which API
// processes of v0.1.0 read and write the catalogue. This build's API and
// CLI call internal/catalog in their own process instead; these go with
// the Catalog workflow once no v0.1.0 API runs.

// UpsertResource creates or updates a resource; the same call twice
// changes nothing.
func (a *Activities) UpsertResource(ctx context.Context, r booking.Resource) (booking.Resource, error) {
	if err := a.reads().PutResource(ctx, r); err != nil {
		return booking.Resource{}, storeError("upsert resource", r.ID, err)
	}
	return r, nil
}

// SetPolicy makes a policy version current.
func (a *Activities) SetPolicy(ctx context.Context, p booking.Policy) (booking.Policy, error) {
	if err := a.reads().PutPolicy(ctx, p); err != nil {
		return booking.Policy{}, storeError("set policy", p.Version, err)
	}
	return p, nil
}

// Availability lists free slots, as catalog.Availability does.
func (a *Activities) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	av, err := a.reads().Availability(ctx, q)
	if err != nil {
		return booking.Availability{}, storeError("availability", q.PropertyID, err)
	}
	return av, nil
}

// OpenFlags lists drift a human has to look at.
func (a *Activities) OpenFlags(ctx context.Context, _ booking.FlagsInput) (booking.FlagsOutput, error) {
	flags, err := a.reads().OpenFlags(ctx)
	if err != nil {
		return booking.FlagsOutput{}, storeError("open flags", "", err)
	}
	return booking.FlagsOutput{Flags: flags}, nil
}

// ResolveFlag records an operator's resolution in the event log.
func (a *Activities) ResolveFlag(ctx context.Context, in booking.ResolveInput) (booking.Flag, error) {
	f, err := a.reads().ResolveFlag(ctx, in.FlagID, in.Note)
	if err != nil {
		return booking.Flag{}, storeError("resolve flag", "", err)
	}
	return f, nil
}

// BookingTimeline reads one key across the store and its mirrors.
func (a *Activities) BookingTimeline(ctx context.Context, in booking.KeyInput) (booking.Timeline, error) {
	t, err := a.reads().Timeline(ctx, in.RequestKey)
	if err != nil {
		return t, storeError("timeline", in.RequestKey, err)
	}
	return t, nil
}
