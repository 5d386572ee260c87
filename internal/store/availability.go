package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// MaxAvailabilityWindow bounds one availability query.
const MaxAvailabilityWindow = 31 * 24 * time.Hour

type freeBusy struct {
	booking.Resource
	before, after time.Duration
	busy          []booking.Span
	// starts are its live bookings' starts, read when it has limits.
	starts []time.Time
}

// Availability lists free slots under the current policy. Local times that
// do not exist or occur twice on a DST change are left out: an agent should
// not offer a time it cannot state unambiguously.
func (s *Store) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	agent := q.AgentID
	if q.AgentPool != "" {
		agent = q.AgentPool // its members are checked once read
	}
	if err := errors.Join(booking.ValidateAgent(q.AgentID, q.AgentPool), booking.ValidateResources(q.PropertyID, agent, q.ExtraResources)); err != nil {
		return booking.Availability{}, fmt.Errorf("availability: %w", firstRejection(err))
	}
	if !q.To.After(q.From) || q.To.Sub(q.From) > MaxAvailabilityWindow || q.Duration < 0 || q.Duration > booking.MaxDuration {
		return booking.Availability{}, fmt.Errorf("availability: %w", booking.Rejectf(booking.CodeInvalidWindow,
			"window must be non-empty and at most %s, duration at most %s", MaxAvailabilityWindow, booking.MaxDuration))
	}
	var out booking.Availability
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			agents := []string{q.AgentID}
			if q.AgentPool != "" {
				var err error
				if agents, err = poolMembers(ctx, tx, q.AgentPool); err != nil {
					return err
				}
			}
			var err error
			out, err = s.availability(ctx, tx, q, agents)
			return err
		})
	if err != nil {
		return booking.Availability{}, fmt.Errorf("availability %s: %w", q.PropertyID, err)
	}
	return out, nil
}

// firstRejection is the first refusal joined in err.
func firstRejection(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()[0]
	}
	return err
}

// availability offers a start when the property, the extras and one of
// agents (one, or a pool's members) can all take it.
func (s *Store) availability(ctx context.Context, tx pgx.Tx, q booking.AvailabilityQuery, agents []string) (booking.Availability, error) {
	p, err := scanPolicy(tx.QueryRow(ctx, currentPolicySQL))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Availability{}, booking.Rejectf(booking.CodeNoCurrentPolicy, "no booking policy is in force")
	}
	if err != nil {
		return booking.Availability{}, err
	}
	now := s.now()
	ids := append(append([]string{q.PropertyID}, q.ExtraResources...), agents...)
	res, err := loadFreeBusy(ctx, tx, ids, q.From, q.To, now)
	if err != nil {
		return booking.Availability{}, err
	}
	prop, extras := res[0], res[1:1+len(q.ExtraResources)]
	var groups [][]*freeBusy // each: the property, an agent, the extras
	for _, a := range res[1+len(q.ExtraResources):] {
		if err := checkKinds(prop.ID, prop.Kind, a.ID, a.Kind); err != nil {
			return booking.Availability{}, err
		}
		groups = append(groups, append([]*freeBusy{prop, a}, extras...))
	}
	ruledGroups := make([][]ruled, len(groups))
	for i, g := range groups {
		if ruledGroups[i], err = ruledOf(g); err != nil {
			return booking.Availability{}, err
		}
	}
	dur := q.Duration
	if dur == 0 {
		dur = time.Duration(p.SlotMinutes) * time.Minute
	}
	loc := ruledGroups[0][0].loc
	out := booking.Availability{PolicyVersion: p.Version, ZoneRules: localtime.Version(), SnapshotAt: now, TimeZone: prop.TimeZone,
		Slots: []booking.Slot{}}
	for _, start := range candidateStarts(*p, prop.Rules, loc, q.From, q.To, dur) {
		end := start.Add(dur)
		if end.After(q.To) {
			continue
		}
		for i, g := range groups {
			// The commit's own rules, on the real end: a slot that crosses
			// a DST change is not as long on the wall clock.
			if allowed(ruledGroups[i], start, end, *p, now) == nil && free(g, start, end) && !blockedGroup(q, g, start, end) {
				out.Slots = append(out.Slots, booking.Slot{StartsAt: start, EndsAt: end, LocalStart: start.In(loc).Format(localtime.Layout)})
				break
			}
		}
	}
	return out, nil
}

// blockedGroup reports whether the calendars show one of g busy then.
func blockedGroup(q booking.AvailabilityQuery, g []*freeBusy, start, end time.Time) bool {
	if q.Blocked == nil {
		return false
	}
	ids := make([]string, len(g))
	for i, r := range g {
		ids[i] = r.ID
	}
	return q.Blocked(start, end, ids)
}

// ruledOf is the resources as the time rules see them; the first is the
// property.
func ruledOf(res []*freeBusy) ([]ruled, error) {
	out := make([]ruled, 0, len(res))
	for i, r := range res {
		loc, err := localtime.LoadZone(r.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", r.ID, err)
		}
		out = append(out, ruled{id: r.ID, loc: loc, rules: r.Rules, window: i == 0, starts: r.starts})
	}
	return out, nil
}

// candidateStarts walks each local day of the window in slot steps within
// the property's opening ranges that day: its own hours, or the policy's
// window.
func candidateStarts(p booking.Policy, rules *booking.Rules, loc *time.Location, from, to time.Time, dur time.Duration) []time.Time {
	var starts []time.Time
	step := time.Duration(p.SlotMinutes) * time.Minute
	wallDate := func(t time.Time) time.Time {
		y, m, d := t.In(loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	last := wallDate(to)
	for day := wallDate(from); !day.After(last); day = day.AddDate(0, 0, 1) {
		ranges, own := rules.Openings(day.Format(time.DateOnly), day.Weekday())
		if !own {
			ranges = [][2]int{{int(p.OpensAt.Minutes()), int(p.ClosesAt.Minutes())}}
		}
		for _, r := range ranges {
			opens, closes := time.Duration(r[0])*time.Minute, time.Duration(r[1])*time.Minute
			for off := opens; off+dur <= closes; off += step {
				start, err := localtime.Resolve(day.Add(off), loc)
				if err != nil {
					continue
				}
				if !start.Before(from) && start.Before(to) {
					starts = append(starts, start)
				}
			}
		}
	}
	return starts
}

func free(res []*freeBusy, start, end time.Time) bool {
	for _, r := range res {
		occ := booking.Span{Start: start.Add(-r.before), End: end.Add(r.after)}
		if n, _ := peak(occ, r.busy); n >= r.Capacity {
			return false
		}
	}
	return true
}

// loadFreeBusy reads the resources in the order asked and their live
// occupancy near the window. Holds past expiry do not count.
func loadFreeBusy(ctx context.Context, tx pgx.Tx, ids []string, from, to time.Time, now time.Time) ([]*freeBusy, error) {
	rows, err := tx.Query(ctx, `
SELECT r.resource_id, r.kind, r.capacity, r.time_zone, rb.before_minutes, rb.after_minutes, r.rules
FROM resource r JOIN resource_buffers rb USING (resource_id) WHERE r.resource_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]*freeBusy{}
	var fb freeBusy
	var before, after int
	_, err = pgx.ForEachRow(rows, []any{&fb.ID, &fb.Kind, &fb.Capacity, &fb.TimeZone, &before, &after, &fb.Rules}, func() error {
		r := fb
		fb.Rules = nil
		r.before, r.after = time.Duration(before)*time.Minute, time.Duration(after)*time.Minute
		byID[r.ID] = &r
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*freeBusy, 0, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			return nil, booking.Rejectf(booking.CodeUnknownResource, "unknown resource %s", id)
		}
		out = append(out, r)
	}
	// Buffers are at most a day, so a day either side finds every booking
	// whose occupancy can reach into the window.
	rows, err = tx.Query(ctx, `
SELECT r.id, lower(lo.occupied), upper(lo.occupied)
FROM unnest($1::text[]) AS r(id)
CROSS JOIN LATERAL live_occupancy(r.id, tstzrange($2, $3)) lo
JOIN booking b ON b.booking_id = lo.booking_id
WHERE NOT (b.status = 'held' AND b.hold_expires_at <= $4)`, ids, from.Add(-24*time.Hour), to.Add(24*time.Hour), now)
	if err != nil {
		return nil, err
	}
	var id string
	var busy booking.Span
	_, err = pgx.ForEachRow(rows, []any{&id, &busy.Start, &busy.End}, func() error {
		byID[id].busy = append(byID[id].busy, busy)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, loadStarts(ctx, tx, out, from, to, now)
}

// loadStarts reads the live bookings' starts of the resources with limits,
// over the window widened to whole ISO weeks.
func loadStarts(ctx context.Context, tx pgx.Tx, res []*freeBusy, from, to, now time.Time) error {
	var ids []string
	byID := map[string]*freeBusy{}
	for _, r := range res {
		if r.Rules != nil && (r.Rules.DailyLimit > 0 || r.Rules.WeeklyLimit > 0) {
			ids, byID[r.ID] = append(ids, r.ID), r
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, liveStartsSQL, ids, from.Add(-weekWindow), to.Add(weekWindow), now)
	if err != nil {
		return err
	}
	var id string
	var at, created time.Time
	var bookingID uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&id, &at, &bookingID, &created}, func() error {
		byID[id].starts = append(byID[id].starts, at)
		return nil
	})
	return err
}
