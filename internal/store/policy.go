package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

const policyColumns = `version, slot_minutes, default_buffer_before_minutes, default_buffer_after_minutes,
	extract(epoch FROM opens_at)::int, extract(epoch FROM closes_at)::int, hold_ttl_seconds, min_notice_minutes, horizon_days, reminder_minutes`

const currentPolicySQL = "SELECT " + policyColumns + " FROM policy WHERE is_current"

func scanPolicy(row pgx.Row) (*booking.Policy, error) {
	var p booking.Policy
	var opens, closes, ttl, notice, reminder int
	if err := row.Scan(&p.Version, &p.SlotMinutes, &p.DefaultBufferBeforeMinutes, &p.DefaultBufferAfterMinutes,
		&opens, &closes, &ttl, &notice, &p.HorizonDays, &reminder); err != nil {
		return nil, err
	}
	p.Reminder = time.Duration(reminder) * time.Minute
	p.OpensAt, p.ClosesAt = time.Duration(opens)*time.Second, time.Duration(closes)*time.Second
	p.HoldTTL, p.MinNotice = time.Duration(ttl)*time.Second, time.Duration(notice)*time.Minute
	return &p, nil
}

// CurrentPolicy returns the policy in force.
func (s *Store) CurrentPolicy(ctx context.Context) (booking.Policy, error) {
	p, err := scanPolicy(s.pool.QueryRow(ctx, currentPolicySQL))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Policy{}, booking.Rejectf(booking.CodeNoCurrentPolicy, "no booking policy is in force")
	}
	if err != nil {
		return booking.Policy{}, fmt.Errorf("current policy: %w", err)
	}
	return *p, nil
}

// SetPolicy makes p the current policy, creating its version if new. A
// version is immutable: setting an existing version with other rules is
// refused, because receipts already name it.
func (s *Store) SetPolicy(ctx context.Context, p booking.Policy) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("set policy %s: %w", p.Version, err)
	}
	return s.retry(ctx, "set policy", p.Version, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return setPolicy(ctx, tx, p) })
	})
}

func setPolicy(ctx context.Context, tx pgx.Tx, p booking.Policy) error {
	// Switching versions takes this lock so two switches cannot both clear
	// the flag and leave no current version.
	if _, err := tx.Exec(ctx, "LOCK TABLE policy IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `
INSERT INTO policy (version, slot_minutes, default_buffer_before_minutes, default_buffer_after_minutes,
    opens_at, closes_at, hold_ttl_seconds, min_notice_minutes, horizon_days, reminder_minutes)
VALUES ($1, $2, $3, $4, make_interval(secs => $5)::time, make_interval(secs => $6)::time, $7, $8, $9, $10)
ON CONFLICT (agency_no, version) DO NOTHING`,
		p.Version, p.SlotMinutes, p.DefaultBufferBeforeMinutes, p.DefaultBufferAfterMinutes,
		int(p.OpensAt.Seconds()), int(p.ClosesAt.Seconds()), int(p.HoldTTL.Seconds()), int(p.MinNotice.Minutes()), p.HorizonDays, int(p.Reminder.Minutes()))
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
