package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// Each agency's voice platforms' signing secrets (migration 040): its
// Retell account's API key, its Vapi credential's secret or HMAC secret,
// by platform. The agency's admin sets them; the API checks a call to
// the agency's tool URLs against them.

// PlatformSecret is the agency's secret for platform; booking.ErrNotFound
// when it set none. It is kept a little while (secretsFor), that it is
// none as well: a platform's calls, and an outsider's unsigned ones, do
// not each read the store. This process's own writes are seen at once;
// another process's within that time.
func (s *Store) PlatformSecret(ctx context.Context, platform string) (string, error) {
	name := secretName(ctx, platform)
	secret, ok, known := s.secrets.get(name, s.now())
	if !known {
		err := s.retry(ctx, "read platform secret", "", func(ctx context.Context) error {
			return s.pool.QueryRow(ctx, `SELECT secret FROM vault.platform_secret WHERE platform = $1`, platform).Scan(&secret)
		})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return "", fmt.Errorf("platform secret %s: %w", platform, err)
		}
		ok = err == nil
		s.secrets.put(name, secret, ok, s.now())
	}
	if !ok {
		return "", fmt.Errorf("platform secret %s: %w", platform, booking.ErrNotFound)
	}
	return secret, nil
}

// secretName names an agency's secret for platform in the cache.
func secretName(ctx context.Context, platform string) string {
	return fmt.Sprint(agency.From(ctx).No, "/", platform)
}

// secretCache keeps the agencies' platform secrets read lately, and
// those found to be none. Only known agencies' calls reach it, so it
// holds at most their secrets.
type secretCache struct {
	mu sync.Mutex
	by map[string]cachedSecret
}

type cachedSecret struct {
	secret string
	set    bool
	at     time.Time
}

// secretsFor is how long a secret read is kept.
const secretsFor = 5 * time.Second

func (c *secretCache) get(name string, now time.Time) (secret string, set, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.by[name]
	if !ok || now.Sub(s.at) >= secretsFor {
		return "", false, false
	}
	return s.secret, s.set, true
}

func (c *secretCache) put(name, secret string, set bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]cachedSecret{}
	}
	c.by[name] = cachedSecret{secret: secret, set: set, at: now}
}

func (c *secretCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.by, name)
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
	s.secrets.forget(secretName(ctx, platform))
	return nil
}

// DeletePlatformSecret removes the agency's secret for platform: its
// tool URL for that platform refuses every call until one is set again.
func (s *Store) DeletePlatformSecret(ctx context.Context, platform string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM vault.platform_secret WHERE platform = $1`, platform); err != nil {
		return fmt.Errorf("delete platform secret %s: %w", platform, err)
	}
	s.secrets.forget(secretName(ctx, platform))
	return nil
}
