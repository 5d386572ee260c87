package store

import (
	"context"
	"fmt"
)

// A caller's STOP (migration 043): kept on each contact of the agency
// with the number, by its phone digest, and erased with the contact.

// StopTexts records that number (E.164, as Twilio gives it) texted STOP,
// or START when stop is false, on every contact of the agency with it,
// and reports how many it found: none is a number that booked nothing
// here, or whose contacts were erased.
func (s *Store) StopTexts(ctx context.Context, number string, stop bool) (int, error) {
	digest, err := s.phoneDigest(ctx, number, "")
	if err != nil || digest == nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE vault.contact_key SET texts_stopped_at = CASE WHEN $2 THEN coalesce(texts_stopped_at, now()) END
WHERE phone_digest = $1 AND data_key IS NOT NULL`, digest, stop)
	if err != nil {
		return 0, fmt.Errorf("stop texts: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// TextsStopped reports whether number, read in zone's country, texted
// STOP to the agency since it last texted START.
func (s *Store) TextsStopped(ctx context.Context, number, zone string) (bool, error) {
	digest, err := s.phoneDigest(ctx, number, zone)
	if err != nil || digest == nil {
		return false, err
	}
	var stopped bool
	err = s.retry(ctx, "texts stopped", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM vault.contact_key WHERE phone_digest = $1 AND texts_stopped_at IS NOT NULL)`,
			digest).Scan(&stopped)
	})
	if err != nil {
		return false, fmt.Errorf("texts stopped: %w", err)
	}
	return stopped, nil
}
