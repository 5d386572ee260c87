package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// MaxListWindow bounds one listing's start range, and MaxListPage a page.
const (
	MaxListWindow = 92 * 24 * time.Hour
	MaxListPage   = 200
)

// Bookings lists the bookings starting in [q.From, q.To), filtered by
// property, agent and status, ordered by start and key, one page after
// q.After: what staff see of a day or a week. A page shorter than the limit
// is the last.
func (s *Store) Bookings(ctx context.Context, q booking.ListQuery) ([]booking.Booking, error) {
	if err := q.Validate(MaxListWindow, MaxListPage); err != nil {
		return nil, fmt.Errorf("list bookings: %w", err)
	}
	rows, err := s.pool.Query(ctx, "SELECT "+bookingColumns+` FROM booking
WHERE starts_at >= $1 AND starts_at < $2 AND ($3 = '' OR property_id = $3) AND ($4 = '' OR agent_id = $4)
  AND ($5 = '' OR status = $5) AND (starts_at, request_key) > ($6, $7)
ORDER BY starts_at, request_key LIMIT $8`, q.From, q.To, q.PropertyID, q.AgentID, string(q.Status), q.After.StartsAt, q.After.RequestKey, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("list bookings: %w", err)
	}
	return collectBookings(rows)
}

func collectBookings(rows pgx.Rows) ([]booking.Booking, error) {
	defer rows.Close()
	out := []booking.Booking{}
	for rows.Next() {
		b, _, err := scanBooking(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// OutsideRules lists confirmed bookings still to come that their
// resources' hours or time off no longer allow (hours changed after they
// were booked), at most limit, with the reason. They stand: the store
// never unmakes a booking for a rule made later; an operator decides.
func (s *Store) OutsideRules(ctx context.Context, limit int) ([]booking.OutsideRules, error) {
	rows, err := s.pool.Query(ctx, `SELECT resource_id, time_zone, rules FROM resource WHERE rules IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("outside rules: %w", err)
	}
	type ruledResource struct {
		zone  string
		rules *booking.Rules
	}
	ruledBy := map[string]ruledResource{}
	var id, zone string
	var rules *booking.Rules
	if _, err := pgx.ForEachRow(rows, []any{&id, &zone, &rules}, func() error {
		ruledBy[id], rules = ruledResource{zone, rules}, nil
		return nil
	}); err != nil || len(ruledBy) == 0 {
		return nil, err
	}
	ids := make([]string, 0, len(ruledBy))
	for id := range ruledBy {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []booking.OutsideRules
	agentOf := map[string]string{}
	after := booking.Cursor{StartsAt: s.now()}
	for len(out) < limit {
		page, err := s.confirmedOn(ctx, ids, after)
		if err != nil {
			return nil, fmt.Errorf("outside rules: %w", err)
		}
		for _, b := range page {
			agentOf[b.RequestKey] = b.Intent.AgentID
		}
		out = appendOutside(out, page, limit, func(id string) (*booking.Rules, string, bool) {
			r, ok := ruledBy[id]
			return r.rules, r.zone, ok
		})
		next := booking.NextPage(page, outsidePage)
		if next == nil {
			break
		}
		after = *next
	}
	if err := s.coverFor(ctx, out, agentOf); err != nil {
		return nil, fmt.Errorf("outside rules: %w", err)
	}
	return out, nil
}

// outsidePage is how many bookings OutsideRules reads at a time.
const outsidePage = 1000

// confirmedOn is a page of the confirmed bookings after a cursor that use
// any of ids.
func (s *Store) confirmedOn(ctx context.Context, ids []string, after booking.Cursor) ([]booking.Booking, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+bookingColumns+` FROM booking
WHERE status = 'confirmed' AND (starts_at, request_key) > ($1, $2)
  AND (property_id = ANY($3) OR agent_id = ANY($3) OR extra_resource_ids && $3)
ORDER BY starts_at, request_key LIMIT $4`, after.StartsAt, after.RequestKey, ids, outsidePage)
	if err != nil {
		return nil, err
	}
	return collectBookings(rows)
}

// appendOutside adds the bookings of page that a resource's rules no
// longer allow, up to limit in all.
func appendOutside(out []booking.OutsideRules, page []booking.Booking, limit int,
	rulesOf func(id string) (*booking.Rules, string, bool)) []booking.OutsideRules {
	for _, b := range page {
		for _, rid := range b.Intent.Resources() {
			rules, zone, ok := rulesOf(rid)
			if !ok {
				continue
			}
			if err := ownRulesRefuse(rules, zone, b.Intent.StartsAt, b.Intent.EndsAt); err != nil {
				out = append(out, booking.OutsideRules{RequestKey: b.RequestKey, ResourceID: rid, StartsAt: b.Intent.StartsAt,
					EndsAt: b.Intent.EndsAt, Reason: err.Error()})
				break
			}
		}
		if len(out) >= limit {
			break
		}
	}
	return out
}

// ownRulesRefuse is why a resource's own rules, in its zone, don't allow
// start to end; nil when they do (no rules: the policy's hours). The
// policy's window is not re-judged: it is versioned, and a booking keeps
// the version it was made under. A zone that can't be read (zones are
// checked when written) judges nothing.
func ownRulesRefuse(rules *booking.Rules, zone string, start, end time.Time) error {
	if rules == nil {
		return nil
	}
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		return nil
	}
	return rules.Open(start, end, loc, booking.Policy{}, false)
}
