package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Each agency's voice platforms' signing secrets (migration 040): its
// Retell account's API key, its Vapi credential's secret or HMAC secret,
// by platform. The agency's admin sets them; the API checks a call to
// the agency's tool URLs against them.

// PlatformSecret is the agency's secret for platform; booking.ErrNotFound
// when it set none.
func (s *Store) PlatformSecret(ctx context.Context, platform string) (string, error) {
	var secret string
	err := s.retry(ctx, "read platform secret", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT secret FROM vault.platform_secret WHERE platform = $1`, platform).Scan(&secret)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("platform secret %s: %w", platform, booking.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("platform secret %s: %w", platform, err)
	}
	return secret, nil
}

// PlatformsSet are the platforms the agency set a secret for.
func (s *Store) PlatformsSet(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT platform FROM vault.platform_secret ORDER BY platform`)
	if err != nil {
		return nil, fmt.Errorf("platforms set: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("platforms set: %w", err)
	}
	return out, nil
}

// PutPlatformSecret sets the agency's secret for platform, replacing the
// one before: the platform's calls signed with the old one are refused
// from then on (rotate at the platform first).
func (s *Store) PutPlatformSecret(ctx context.Context, platform, secret string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO vault.platform_secret (platform, secret) VALUES ($1, $2)
ON CONFLICT (agency_no, platform) DO UPDATE SET secret = EXCLUDED.secret, updated_at = now()`, platform, secret)
	if err != nil {
		return fmt.Errorf("put platform secret %s: %w", platform, err)
	}
	return nil
}

// DeletePlatformSecret removes the agency's secret for platform: its
// tool URL for that platform refuses every call until one is set again.
func (s *Store) DeletePlatformSecret(ctx context.Context, platform string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM vault.platform_secret WHERE platform = $1`, platform); err != nil {
		return fmt.Errorf("delete platform secret %s: %w", platform, err)
	}
	return nil
}
