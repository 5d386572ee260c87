package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// DueMessages returns up to limit of the caller messages due (migration
// 026), oldest first, each with its booking as the store holds it now.
func (s *Store) DueMessages(ctx context.Context, limit int) ([]booking.Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_id, request_key, kind FROM caller_message
WHERE status = 'due' AND (not_before IS NULL OR not_before <= $2) ORDER BY message_id LIMIT $1`, limit, s.now())
	if err != nil {
		return nil, fmt.Errorf("due messages: %w", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowToStructByPos[booking.Message])
	if err != nil {
		return nil, fmt.Errorf("due messages: %w", err)
	}
	for i := range due {
		if due[i].Booking, err = s.Lookup(ctx, due[i].RequestKey); err != nil {
			return nil, fmt.Errorf("due messages: %w", err)
		}
	}
	return due, nil
}

// MessageDone records how a due message ended: sent (with the
// provider's id), not_consented, undeliverable or stale. A message ends
// once; a second mark changes nothing.
func (s *Store) MessageDone(ctx context.Context, id int64, status booking.MessageStatus, ch booking.Channel, providerID, why string) error {
	return s.retry(ctx, "message done", fmt.Sprint(id), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
UPDATE caller_message SET status = $2, channel = nullif($3, ''), provider_id = nullif($4, ''), last_error = nullif($5, ''),
    attempts = attempts + CASE WHEN $2 IN ('sent', 'undeliverable') THEN 1 ELSE 0 END,
    sent_at = CASE WHEN $2 = 'sent' THEN $6::timestamptz END
WHERE message_id = $1 AND status = 'due'`, id, string(status), string(ch), providerID, why, s.now())
		return err
	})
}

// MessageHeld holds a due message back until until (quiet hours).
func (s *Store) MessageHeld(ctx context.Context, id int64, until time.Time) error {
	return s.retry(ctx, "message held", fmt.Sprint(id), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE caller_message SET not_before = $2 WHERE message_id = $1 AND status = 'due'`, id, until)
		return err
	})
}

// MessageFailed records a failed attempt of a message that stays due.
func (s *Store) MessageFailed(ctx context.Context, id int64, why string) error {
	return s.retry(ctx, "message failed", fmt.Sprint(id), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE caller_message SET attempts = attempts + 1, last_error = $2 WHERE message_id = $1 AND status = 'due'`,
			id, why)
		return err
	})
}

// Messages lists what was queued for key's caller, oldest first: the
// operator's view of a booking, and the tests'.
func (s *Store) Messages(ctx context.Context, key string) ([]booking.MessageRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, status, coalesce(channel, ''), coalesce(provider_id, ''), attempts, coalesce(last_error, '')
FROM caller_message WHERE request_key = $1 ORDER BY message_id`, key)
	if err != nil {
		return nil, fmt.Errorf("messages %s: %w", key, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[booking.MessageRecord])
	if err != nil {
		return nil, fmt.Errorf("messages %s: %w", key, err)
	}
	return out, nil
}
