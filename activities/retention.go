package activities

import (
	"context"
	"fmt"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// Retention: holds past their expiry, contact details past theirs, and
// bookings, refusals and events past theirs.

// ExpireStaleHolds expires holds past their time, at most Limit.
func (a *Activities) ExpireStaleHolds(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	return a.counted(ctx, "expire holds", "expired_hold", "repaired")(a.Store.ExpireHolds(ctx, in.Limit))
}

// PurgeContacts deletes contact details past retention, at most Limit,
// then has the CRM delete the contacts of callers erased (at retention or
// on request), at most Limit more: the count is both.
func (a *Activities) PurgeContacts(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	out, err := a.counted(ctx, "purge contacts", "contact_retention", "purged")(a.Store.PurgeContacts(ctx, in.Limit))
	if err != nil {
		return out, err
	}
	n, err := a.forgetCallers(ctx, in.Limit)
	a.drift(ctx, "crm_contact_erased", "forgotten", n)
	return booking.CountOutput{Count: out.Count + n}, err
}

// forgetCallers deletes, through the CRM's privacy API, the contacts of
// callers the store erased; each is marked forgotten once the CRM said so.
func (a *Activities) forgetCallers(ctx context.Context, limit int) (int, error) {
	set, err := a.mirrors(ctx)
	if err != nil || set.CRM == nil {
		return 0, err
	}
	due, err := a.Store.CRMContactsToForget(ctx, limit)
	if err != nil {
		return 0, storeError("forget crm contacts", "", err)
	}
	for i, c := range due {
		kept, _ := set.CRM.For(c.CRM)
		contacts, ok := kept.(crm.Contacts)
		if !ok {
			return i, mirrorError("forget crm contact", c.RequestKey, fmt.Errorf("crm %q is not configured here: the contact can't be deleted", c.CRM), false)
		}
		if err := forgetContact(ctx, contacts, c); err != nil {
			// A refusal for good (a revoked token, a missing scope) fails
			// the step at once; the run goes on with the others.
			return i, mirrorError("forget crm contact", c.RequestKey, err, crm.Permanent(err))
		}
		if err := a.Store.ForgotCRMContact(ctx, c.RequestKey, c.ContactRef); err != nil {
			return i, storeError("forget crm contact", c.RequestKey, err)
		}
	}
	return len(due), nil
}

// forgetContact lets an erased caller's CRM contact go as what it is: one
// the service made is deleted through the CRM's privacy API; one it found
// is the agency's, and only loses the caller's records.
func forgetContact(ctx context.Context, contacts crm.Contacts, c booking.CRMContact) error {
	if c.Created {
		return contacts.Forget(ctx, c.ContactRef)
	}
	return contacts.Unlink(ctx, c.ContactRef, c.Records)
}

// NoteReconcile records how each step of a reconciliation run ended, for
// ops attention, and counts each failure (reconcile_step_failures_total by
// step); the error is kept scrubbed of any contact a provider echoed.
func (a *Activities) NoteReconcile(ctx context.Context, in booking.NoteReconcileInput) (booking.CountOutput, error) {
	steps := make([]booking.StepOutcome, len(in.Steps))
	for i, st := range in.Steps {
		steps[i] = booking.StepOutcome{Step: st.Step, Error: booking.Scrub(st.Error)}
	}
	if err := a.Store.NoteReconcile(ctx, steps); err != nil {
		return booking.CountOutput{}, storeError("note reconcile", "", err)
	}
	// Counted once recorded: a retry after a failed write counts nothing twice.
	failed := 0
	for _, st := range steps {
		if st.Error != "" {
			failed++
			a.metrics(ctx).Tagged(map[string]string{"step": st.Step}).Counter("reconcile_step_failures_total").Inc(1)
		}
	}
	return booking.CountOutput{Count: failed}, nil
}

// ApplyRetention anonymises bookings and deletes refusals and events past
// their retention, at most Limit of each, where the worker's login may
// (a single-role deployment); otherwise starter retention does.
func (a *Activities) ApplyRetention(ctx context.Context, in booking.LimitInput) (booking.CountOutput, error) {
	if a.RetentionElsewhere {
		return booking.CountOutput{}, nil
	}
	return a.counted(ctx, "apply retention", "booking_retention", "retired")(a.Store.ApplyRetention(ctx, in.Limit))
}

// counted answers a store pass that did n things: its error translated
// for op, its count as drift of category repaired by action.
func (a *Activities) counted(ctx context.Context, op, category, action string) func(n int, err error) (booking.CountOutput, error) {
	return func(n int, err error) (booking.CountOutput, error) {
		if err != nil {
			return booking.CountOutput{}, storeError(op, "", err)
		}
		a.drift(ctx, category, action, n)
		return booking.CountOutput{Count: n}, nil
	}
}

// FollowZoneRules checks up to Limit future bookings under the zone rules
// this worker carries: each whose promised local time now names another
// instant moves there, or is flagged when it cannot (store.FollowZoneRules).
// Its mirrors follow in the same reconciliation run, which repairs
// calendar events and CRM records from the store after this step.
func (a *Activities) FollowZoneRules(ctx context.Context, in booking.LimitInput) (booking.ZoneRulesReport, error) {
	rep, err := a.Store.FollowZoneRules(ctx, in.Limit)
	a.drift(ctx, "zone_rules_changed", "repaired", rep.Moved)
	a.drift(ctx, "zone_rules_changed", "flagged", rep.Flagged)
	if err != nil {
		return rep, storeError("follow zone rules", "", err)
	}
	return rep, nil
}

// Agencies lists the deployment's agencies, for the default agency's
// reconciliation run to start one run in each other.
func (a *Activities) Agencies(ctx context.Context, _ booking.LimitInput) (agency.List, error) {
	all, err := a.Store.Agencies(ctx)
	if err != nil {
		return agency.List{}, storeError("agencies", "", err)
	}
	out := agency.List{Agencies: make([]agency.Agency, len(all))}
	for i, n := range all {
		out.Agencies[i] = n.Agency
	}
	return out, nil
}
