package activities

import (
	"context"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Retention: holds past their expiry, contact details past theirs, and
// bookings, refusals and events past theirs.

// ExpireStaleHolds expires holds past their time, at most Limit.
func (a *Activities) ExpireStaleHolds(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	n, err := a.Store.ExpireHolds(ctx, in.Limit)
	if err != nil {
		return booking.CountOutput{}, storeError("expire holds", "", err)
	}
	a.drift("expired_hold", "repaired", n)
	return booking.CountOutput{Count: n}, nil
}

// PurgeContacts deletes contact details past retention, at most Limit.
func (a *Activities) PurgeContacts(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	n, err := a.Store.PurgeContacts(ctx, in.Limit)
	if err != nil {
		return booking.CountOutput{}, storeError("purge contacts", "", err)
	}
	a.drift("contact_retention", "purged", n)
	return booking.CountOutput{Count: n}, nil
}

// ApplyRetention anonymises bookings and deletes refusals and events past
// their retention, at most Limit of each, where the worker's login may
// (a single-role deployment); otherwise starter retention does.
func (a *Activities) ApplyRetention(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	if a.RetentionElsewhere {
		return booking.CountOutput{}, nil
	}
	n, err := a.Store.ApplyRetention(ctx, in.Limit)
	if err != nil {
		return booking.CountOutput{}, storeError("apply retention", "", err)
	}
	a.drift("booking_retention", "retired", n)
	return booking.CountOutput{Count: n}, nil
}

// FollowZoneRules checks up to Limit future bookings under the zone rules
// this worker carries: each whose promised local time now names another
// instant moves there, or is flagged when it cannot (store.FollowZoneRules).
// Its mirrors follow in the same reconciliation run, which repairs
// calendar events and CRM records from the store after this step.
func (a *Activities) FollowZoneRules(ctx context.Context, in booking.LimitInput) (booking.ZoneRulesReport, error) {
	rep, err := a.Store.FollowZoneRules(ctx, in.Limit)
	a.drift("zone_rules_changed", "repaired", rep.Moved)
	a.drift("zone_rules_changed", "flagged", rep.Flagged)
	if err != nil {
		return rep, storeError("follow zone rules", "", err)
	}
	return rep, nil
}
