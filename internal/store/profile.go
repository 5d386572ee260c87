package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Profile is the agency as its callers see it (migration 046): empty
// until its admin sets one.
func (s *Store) Profile(ctx context.Context) (booking.Profile, error) {
	var p booking.Profile
	err := s.retry(ctx, "profile", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT name, callback_phone FROM agency_profile`).Scan(&p.Name, &p.Phone)
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return booking.Profile{}, fmt.Errorf("profile: %w", err)
	}
	return p, nil
}

// PutProfile sets the agency's profile, after checking it.
func (s *Store) PutProfile(ctx context.Context, p booking.Profile) error {
	if err := p.Validate(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO agency_profile (name, callback_phone, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (agency_no) DO UPDATE SET name = EXCLUDED.name, callback_phone = EXCLUDED.callback_phone, updated_at = EXCLUDED.updated_at`,
		p.Name, p.Phone, s.now())
	if err != nil {
		return fmt.Errorf("put profile: %w", err)
	}
	return nil
}
