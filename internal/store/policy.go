package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Policy is one version of the booking rules.
type Policy struct {
	Version                    string
	SlotMinutes                int
	DefaultBufferBeforeMinutes int
	DefaultBufferAfterMinutes  int
	// OpensAt and ClosesAt bound bookable hours, as offsets from local
	// midnight in each property's own zone.
	OpensAt, ClosesAt time.Duration
	HoldTTL           time.Duration
	MinNotice         time.Duration
}

func (p Policy) validate() error {
	switch {
	case p.Version == "" || len(p.Version) > 100:
		return booking.Rejectf(booking.CodeInvalidPolicy, "version must be 1 to 100 characters")
	case p.SlotMinutes < 5 || p.SlotMinutes > 1440:
		return booking.Rejectf(booking.CodeInvalidPolicy, "slot_minutes must be 5 to 1440")
	case p.DefaultBufferBeforeMinutes < 0 || p.DefaultBufferBeforeMinutes > 1440 ||
		p.DefaultBufferAfterMinutes < 0 || p.DefaultBufferAfterMinutes > 1440:
		return booking.Rejectf(booking.CodeInvalidPolicy, "buffers must be 0 to 1440 minutes")
	case p.OpensAt < 0 || p.ClosesAt > 24*time.Hour-time.Minute || p.ClosesAt <= p.OpensAt ||
		p.OpensAt%time.Minute != 0 || p.ClosesAt%time.Minute != 0:
		return booking.Rejectf(booking.CodeInvalidPolicy, "bookable hours must be whole minutes with opens before closes within one day")
	case p.HoldTTL < time.Second || p.HoldTTL > 24*time.Hour || p.HoldTTL%time.Second != 0:
		return booking.Rejectf(booking.CodeInvalidPolicy, "hold_ttl must be whole seconds from 1s to 24h")
	case p.MinNotice < 0 || p.MinNotice%time.Minute != 0:
		return booking.Rejectf(booking.CodeInvalidPolicy, "min_notice must be whole minutes, not negative")
	}
	return nil
}

// withinHours reports whether [start, end) lies within bookable hours on one
// local day in loc.
func (p Policy) withinHours(start, end time.Time, loc *time.Location) bool {
	h := wall(start, end, loc)
	return h.sameDay && time.Duration(h.start)*time.Second >= p.OpensAt && time.Duration(h.end)*time.Second <= p.ClosesAt
}

// wallHours is a span's local start and end as whole seconds since local
// midnight, and whether both fall on the same local day.
type wallHours struct {
	sameDay    bool
	start, end int
}

func wall(start, end time.Time, loc *time.Location) wallHours {
	ls, le := start.In(loc), end.In(loc)
	secs := func(t time.Time) int { h, m, s := t.Clock(); return h*3600 + m*60 + s }
	y, m, d := ls.Date()
	ey, em, ed := le.Date()
	return wallHours{sameDay: y == ey && m == em && d == ed, start: secs(ls), end: secs(le)}
}

func (p Policy) hours() string {
	clock := func(d time.Duration) string { return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60) }
	return clock(p.OpensAt) + "–" + clock(p.ClosesAt)
}

const policyColumns = `version, slot_minutes, default_buffer_before_minutes, default_buffer_after_minutes,
	extract(epoch FROM opens_at)::int, extract(epoch FROM closes_at)::int, hold_ttl_seconds, min_notice_minutes`

const currentPolicySQL = "SELECT " + policyColumns + " FROM policy WHERE is_current"

func scanPolicy(row pgx.Row) (*Policy, error) {
	var p Policy
	var opens, closes, ttl, notice int
	if err := row.Scan(&p.Version, &p.SlotMinutes, &p.DefaultBufferBeforeMinutes, &p.DefaultBufferAfterMinutes,
		&opens, &closes, &ttl, &notice); err != nil {
		return nil, err
	}
	p.OpensAt, p.ClosesAt = time.Duration(opens)*time.Second, time.Duration(closes)*time.Second
	p.HoldTTL, p.MinNotice = time.Duration(ttl)*time.Second, time.Duration(notice)*time.Minute
	return &p, nil
}

// CurrentPolicy returns the policy in force.
func (s *Store) CurrentPolicy(ctx context.Context) (Policy, error) {
	p, err := scanPolicy(s.pool.QueryRow(ctx, currentPolicySQL))
	if errors.Is(err, pgx.ErrNoRows) {
		return Policy{}, booking.Rejectf(booking.CodeNoCurrentPolicy, "no booking policy is in force")
	}
	if err != nil {
		return Policy{}, fmt.Errorf("current policy: %w", err)
	}
	return *p, nil
}

// SetPolicy makes p the current policy, creating its version if new. A
// version is immutable: setting an existing version with other rules is
// refused, because receipts already name it.
func (s *Store) SetPolicy(ctx context.Context, p Policy) error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("set policy %s: %w", p.Version, err)
	}
	return s.retry(ctx, "set policy", p.Version, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return setPolicy(ctx, tx, p) })
	})
}

func setPolicy(ctx context.Context, tx pgx.Tx, p Policy) error {
	// Switching versions takes this lock so two switches cannot both clear
	// the flag and leave no current version.
	if _, err := tx.Exec(ctx, "LOCK TABLE policy IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `
INSERT INTO policy (version, slot_minutes, default_buffer_before_minutes, default_buffer_after_minutes,
    opens_at, closes_at, hold_ttl_seconds, min_notice_minutes)
VALUES ($1, $2, $3, $4, make_interval(secs => $5)::time, make_interval(secs => $6)::time, $7, $8)
ON CONFLICT (version) DO NOTHING`,
		p.Version, p.SlotMinutes, p.DefaultBufferBeforeMinutes, p.DefaultBufferAfterMinutes,
		int(p.OpensAt.Seconds()), int(p.ClosesAt.Seconds()), int(p.HoldTTL.Seconds()), int(p.MinNotice.Minutes()))
	if err != nil {
		return err
	}
	stored, err := scanPolicy(tx.QueryRow(ctx, "SELECT "+policyColumns+" FROM policy WHERE version = $1", p.Version))
	if err != nil {
		return err
	}
	if *stored != p {
		return booking.Rejectf(booking.CodePolicyImmutable,
			"policy %q already exists with other rules; publish a new version", p.Version)
	}
	if _, err := tx.Exec(ctx, "UPDATE policy SET is_current = false WHERE is_current AND version <> $1", p.Version); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE policy SET is_current = true WHERE version = $1 AND NOT is_current", p.Version)
	return err
}
