package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
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

// AnswerOnce reports whether a reply from number the service did not
// understand is answered, and about what: the earliest booking still to
// come of the number's contacts (through their moves), once a
// booking.ReplyAnswerEvery per number, never after its STOP. It marks the
// answer on the number's contacts (migration 046) before the answer goes,
// so a lost answer is not sent twice.
func (s *Store) AnswerOnce(ctx context.Context, number string) (booking.ReplyAnswer, bool, error) {
	digest, err := s.phoneDigest(ctx, number, "")
	if err != nil || digest == nil {
		return booking.ReplyAnswer{}, false, err
	}
	now := s.now()
	var key string
	err = s.pool.QueryRow(ctx, `WITH RECURSIVE chain(request_key) AS (
    SELECT request_key FROM vault.contact_key WHERE phone_digest = $1 AND data_key IS NOT NULL
    UNION
    SELECT b.request_key FROM booking b JOIN chain c ON b.replaces_request_key = c.request_key
), mine AS (
    SELECT b.request_key FROM booking b JOIN chain USING (request_key)
    WHERE b.status = 'confirmed' AND b.starts_at > $2 ORDER BY b.starts_at LIMIT 1
), answered AS (
    UPDATE vault.contact_key SET texts_answered_at = $2
    WHERE phone_digest = $1 AND data_key IS NOT NULL AND EXISTS (SELECT 1 FROM mine)
      AND NOT EXISTS (SELECT 1 FROM vault.contact_key WHERE phone_digest = $1 AND texts_stopped_at IS NOT NULL)
      AND (texts_answered_at IS NULL OR texts_answered_at <= $3)
    RETURNING 1
)
SELECT request_key FROM mine WHERE EXISTS (SELECT 1 FROM answered)`, digest, now, now.Add(-booking.ReplyAnswerEvery)).Scan(&key)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return booking.ReplyAnswer{}, false, nil
	case err != nil:
		return booking.ReplyAnswer{}, false, fmt.Errorf("answer reply: %w", err)
	}
	var a booking.ReplyAnswer
	if a.Booking, err = s.Lookup(ctx, key); err != nil {
		return booking.ReplyAnswer{}, false, fmt.Errorf("answer reply: %w", err)
	}
	c, err := s.Contact(ctx, key)
	if err != nil {
		return booking.ReplyAnswer{}, false, fmt.Errorf("answer reply: %w", err)
	}
	a.Lang = c.Lang
	if a.Token, err = s.CallerLink(ctx, key, a.Booking.Intent.EndsAt); err != nil {
		return booking.ReplyAnswer{}, false, fmt.Errorf("answer reply: %w", err)
	}
	return a, true, nil
}

// ReplyTaken reports whether the reply Twilio named sid was taken before
// (migration 048): one posted again, by Twilio's retry or by someone
// replaying a signed request, acts once.
func (s *Store) ReplyTaken(ctx context.Context, sid string) (bool, error) {
	var taken bool
	err := s.retry(ctx, "reply taken", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM text_reply WHERE message_sid = $1)`, sid).Scan(&taken)
	})
	if err != nil {
		return false, fmt.Errorf("reply taken: %w", err)
	}
	return taken, nil
}

// TakeReply records that the reply sid was acted on. It is recorded
// after the act, so that a reply whose act failed is acted on when
// Twilio posts it again.
func (s *Store) TakeReply(ctx context.Context, sid string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO text_reply (message_sid, received_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, sid, s.now())
	if err != nil {
		return fmt.Errorf("take reply: %w", err)
	}
	return nil
}
