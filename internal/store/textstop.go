package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A caller's replies to their texts: STOP (migration 043), kept on each
// contact of the agency with the number, by its phone digest, and erased
// with the contact; C to a reminder (044), on the booking.

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

// Reconfirm records that number (E.164) replied to a reminder that they
// are coming: on each of the agency's bookings of theirs still to come,
// confirmed and reminded by text, found by the number's contacts and the
// moves since (a moved booking keeps its first one's contact). It
// answers the request keys it marked; none is a number with no such
// booking here.
func (s *Store) Reconfirm(ctx context.Context, number string) ([]string, error) {
	digest, err := s.phoneDigest(ctx, number, "")
	if err != nil || digest == nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE chain(request_key) AS (
    SELECT request_key FROM vault.contact_key WHERE phone_digest = $1 AND data_key IS NOT NULL
    UNION
    SELECT b.request_key FROM booking b JOIN chain c ON b.replaces_request_key = c.request_key
)
UPDATE booking b SET reconfirmed_at = coalesce(b.reconfirmed_at, $2)
FROM chain
WHERE b.request_key = chain.request_key AND b.status = 'confirmed' AND b.starts_at > $2
  AND EXISTS (SELECT 1 FROM caller_message m WHERE m.request_key = b.request_key AND m.kind = 'reminder' AND m.status = 'sent')
RETURNING b.request_key`, digest, s.now())
	if err != nil {
		return nil, fmt.Errorf("reconfirm: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("reconfirm: %w", err)
	}
	return keys, nil
}
