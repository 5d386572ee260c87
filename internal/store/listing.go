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
	rows, err = s.pool.Query(ctx, "SELECT "+bookingColumns+` FROM booking
WHERE status = 'confirmed' AND starts_at >= $1 AND (property_id = ANY($2) OR agent_id = ANY($2) OR extra_resource_ids && $2)
ORDER BY starts_at, request_key LIMIT 1000`, s.now(), ids)
	if err != nil {
		return nil, fmt.Errorf("outside rules: %w", err)
	}
	bookings, err := collectBookings(rows)
	if err != nil {
		return nil, fmt.Errorf("outside rules: %w", err)
	}
	var out []booking.OutsideRules
	for _, b := range bookings {
		for _, rid := range b.Intent.Resources() {
			r, ok := ruledBy[rid]
			if !ok {
				continue
			}
			loc, err := localtime.LoadZone(r.zone)
			if err != nil {
				continue
			}
			// The policy's window is not re-judged: it is versioned, and a
			// booking keeps the version it was made under.
			if err := r.rules.Open(b.Intent.StartsAt, b.Intent.EndsAt, loc, booking.Policy{}, false); err != nil {
				out = append(out, booking.OutsideRules{RequestKey: b.RequestKey, ResourceID: rid, StartsAt: b.Intent.StartsAt, Reason: err.Error()})
				break
			}
		}
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}
