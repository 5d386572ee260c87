package store

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// This file is the commit rule: whether an intent may be booked under the
// policy in force, and whether its resources have room. Where it lives:
//
//   - Effective buffers (the larger of a resource's own and the policy's
//     defaults) are defined once, by the view resource_buffers, which the
//     full path, availability and the calendar re-check all read.
//   - What a booking occupies (its time widened by those buffers) is
//     computed from the view by the full path's occupancy statement
//     (commitstate.go) and by availability, and stored per resource.
//   - Whether a resource is full is peak, below: the most bookings in
//     force at one instant, against its capacity.
//   - Whether the intent may be booked at all is check, below; its parts
//     about kinds and about time (checkKinds, allowed: the policy's and
//     each resource's notice, horizon, hours, time off and limits, from
//     booking.Rules) are what availability filters its offers by too, so
//     an offer never promises what the commit would refuse.
//
// The fast path (fastpath.go) states a subset of check and the effective
// buffers again in SQL: it is the one second copy, and it may only
// decline where this file would refuse; TestFastPathConfirmsOnlyWhatTheFullPathWould
// keeps the two in step. A resource's own rules it does not restate: it
// judges those that judge the slot alone (hours, overrides, time off) by
// booking.Rules.Open before its statement, which checks the resource
// still has them, and leaves the rest to check.

// check applies the policy and the resources' own rules to the intent.
func (st *commitState) check(req CommitRequest, now time.Time) error {
	p, in := st.policy, req.Intent
	switch {
	case p == nil:
		return booking.Rejectf(booking.CodeNoCurrentPolicy, "no booking policy is in force")
	case req.ExpectedPolicyVersion != p.Version:
		return booking.Rejectf(booking.CodePolicyVersionChanged,
			"expected policy %q but %q is in force: refresh availability", req.ExpectedPolicyVersion, p.Version)
	case !zoneRulesAgree(req.CommitRequest):
		return booking.Rejectf(booking.CodeZoneRulesChanged,
			"offered under zone rules %s but %s are in use, which read it as another instant: refresh availability", req.ExpectedZoneRules, localtime.Version())
	case len(st.missing) > 0:
		return booking.Rejectf(booking.CodeUnknownResource, "unknown resource %s", strings.Join(st.missing, ", "))
	}
	prop, agent := st.resource(in.PropertyID), st.resource(in.AgentID)
	if err := checkKinds(prop.ID, prop.Kind, agent.ID, agent.Kind); err != nil {
		return err
	}
	if in.TimeZone != prop.TimeZone {
		return booking.Rejectf(booking.CodeTimeZoneMismatch,
			"property %q is in %s, not %s", prop.ID, prop.TimeZone, in.TimeZone)
	}
	rs, err := st.ruled(in.PropertyID)
	if err != nil {
		return err
	}
	if err := st.timeRule(rs, in, *p, now); err != nil {
		return err
	}
	return st.checkReplaced(req)
}

// timeRule is allowed, but for a reassignment (staff move a booking to
// another agent because its own fell ill this morning): the notice and the
// horizon protect the caller and the agent from a late booking, and a
// reassignment changes neither the time nor the property, so only where
// the new agent may stand (fits) applies, and a viewing under way or over
// is not reassigned.
func (st *commitState) timeRule(rs []ruled, in booking.Intent, p booking.Policy, now time.Time) error {
	if !st.replaced.reassigns(in) {
		return allowed(rs, in.StartsAt, in.EndsAt, p, now)
	}
	if in.StartsAt.Before(now) {
		return booking.Rejectf(booking.CodeStartsInPast, "starts_at %s is in the past", in.StartsAt.Format(time.RFC3339))
	}
	return fits(rs, in.StartsAt, in.EndsAt, p)
}

// checkKinds: a booking is of a property, with an agent.
func checkKinds(propID, propKind, agentID, agentKind string) error {
	switch {
	case propKind != "property":
		return booking.Rejectf(booking.CodeWrongResourceKind, "property_id %q is a %s", propID, propKind)
	case agentKind != "agent":
		return booking.Rejectf(booking.CodeWrongResourceKind, "agent_id %q is a %s", agentID, agentKind)
	}
	return nil
}

// ruled is one resource as the time rules see it: its zone, its own rules,
// whether the policy's daily window applies to it (the property's does),
// and the starts of its live bookings near the slot when it has limits.
type ruled struct {
	id     string
	loc    *time.Location
	rules  *booking.Rules
	window bool
	starts []time.Time
}

// allowed is the time rule of a booking of [start, end) at now: the
// policy's notice and horizon and each resource's own, then each
// resource's hours (or the policy's window, for the property), time off
// and limits. Commit refuses by it; availability offers only what passes
// it.
func allowed(rs []ruled, start, end time.Time, p booking.Policy, now time.Time) error {
	for _, r := range rs {
		if err := r.rules.Notice(start, p, now); err != nil {
			return err
		}
	}
	return fits(rs, start, end, p)
}

// fits is the time rule of where a booking may stand, whenever it was
// made: hours (or the policy's window), time off and limits. A booking
// that follows a change of its zone's rules must fit; notice and horizon
// were the caller's to meet when booking, and were met.
func fits(rs []ruled, start, end time.Time, p booking.Policy) error {
	for _, r := range rs {
		if err := r.rules.Open(start, end, r.loc, p, r.window); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if err := r.rules.Limit(r.id, start, r.loc, r.starts); err != nil {
			return err
		}
	}
	return nil
}

// checkReplaced allows a reschedule only of a confirmed booking that no
// other booking has replaced. A restore of a reschedule's new booking
// (the store lost it) releases the old one only if the store still holds
// it so; if not, its side of the move is gone already, and the restore
// stands as a booking of its own rather than be refused for it.
func (st *commitState) checkReplaced(req CommitRequest) error {
	if req.Intent.Replaces == "" {
		return nil
	}
	r := st.replaced
	if req.RestoreID != uuid.Nil && (r == nil || r.status != booking.StatusConfirmed || r.replacedBy != "" && r.replacedBy != req.RequestKey) {
		st.replaced = nil
		return nil
	}
	switch {
	case r == nil:
		return booking.Rejectf(booking.CodeInvalidReplacement, "there is no booking %q to reschedule", req.Intent.Replaces)
	case r.status != booking.StatusConfirmed || r.replacedBy != "" && r.replacedBy != req.RequestKey:
		return booking.Rejectf(booking.CodeInvalidReplacement, "booking %q is %s and cannot be rescheduled", req.Intent.Replaces, r.status)
	}
	return nil
}

// busy lists the resources that are full during the request, and the holds
// that had already expired, which neither count nor may stay live.
func (st *commitState) busy(now time.Time) (busy []booking.Busy, stale []uuid.UUID) {
	for _, r := range st.resources {
		var others []booking.Span
		for _, o := range r.others {
			if o.status == booking.StatusHeld && o.holdExpires != nil && !o.holdExpires.After(now) {
				if !slices.Contains(stale, o.bookingID) {
					stale = append(stale, o.bookingID)
				}
				continue
			}
			if st.replaced != nil && o.bookingID == st.replaced.id && !st.holding {
				continue // released by this very commit
			}
			others = append(others, o.Span)
		}
		if n, where := peak(r.occupied, others); n >= r.Capacity {
			busy = append(busy, booking.Busy{ResourceID: r.ID, Capacity: r.Capacity, From: where.Start, To: where.End})
		}
	}
	return busy, stale
}

// peak returns the largest number of others in force at one instant within
// win, and the first window where that many are. Counting rows that merely
// overlap win would be wrong for capacity above one: two bookings can each
// overlap the window without overlapping each other.
func peak(win booking.Span, others []booking.Span) (int, booking.Span) {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(others))
	for _, o := range others {
		start, end := later(o.Start, win.Start), earlier(o.End, win.End)
		if start.Before(end) {
			edges = append(edges, edge{start, +1}, edge{end, -1})
		}
	}
	// Ends sort before starts at the same instant: ranges are half-open, so
	// one booking ending at 10:00 and another starting then do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	best, cur := 0, 0
	var at booking.Span
	for i, e := range edges {
		cur += e.delta
		if cur > best {
			best = cur
			at = booking.Span{Start: e.at, End: edges[i+1].at}
		}
	}
	return best, at
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// zoneRulesAgree reports whether the store's zone rules back the instant
// the request was resolved to: the same release, or (an edge on another
// release, as in a rolling deploy) the local time the caller agreed,
// which this release reads as that very instant. An offer resolved from
// an instant alone, under another release, is not known to agree.
func zoneRulesAgree(req booking.CommitRequest) bool {
	if req.ExpectedZoneRules == "" || req.ExpectedZoneRules == localtime.Version() {
		return true
	}
	if req.ExpectedLocalStart == "" {
		return false
	}
	at, err := localtime.Parse(req.ExpectedLocalStart, req.Intent.TimeZone)
	return err == nil && at.Equal(req.Intent.StartsAt)
}
