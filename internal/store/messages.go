package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// DueMessages returns up to limit of the caller messages due (migration
// 026), oldest first, each with its booking as the store holds it now.
func (s *Store) DueMessages(ctx context.Context, limit int) ([]booking.Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_id, request_key, kind, created_at, coalesce(unlock_id, 0) FROM caller_message
WHERE status = 'due' AND (not_before IS NULL OR not_before <= $2) ORDER BY message_id LIMIT $1`, limit, s.now())
	if err != nil {
		return nil, fmt.Errorf("due messages: %w", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowToStructByPos[booking.Message])
	if err != nil {
		return nil, fmt.Errorf("due messages: %w", err)
	}
	for i := range due {
		if due[i].Kind == booking.MessageNotBooked {
			// A key refused has no booking: the message is of the intent.
			if due[i].Booking, err = s.refused(ctx, due[i].RequestKey); err != nil {
				return nil, fmt.Errorf("due messages: %w", err)
			}
			due[i].Thread = due[i].RequestKey
			continue
		}
		if due[i].Booking, err = s.Lookup(ctx, due[i].RequestKey); err != nil {
			return nil, fmt.Errorf("due messages: %w", err)
		}
		// The first booking of its moves, by the chain the contact follows.
		chain, err := s.ancestors(ctx, due[i].RequestKey)
		if err != nil {
			return nil, fmt.Errorf("due messages: thread of %s: %w", due[i].RequestKey, err)
		}
		due[i].Thread, due[i].Moves = chain[len(chain)-1], len(chain)-1
	}
	return due, nil
}

// MessageTry takes a due message for one try, for lease: no other sender
// sees it due until the try ends (sent, failed, held) or the lease runs
// out (the sender died), so two attempts of the sender at once (Temporal
// starts another when one outlives its timeout) never both send it. It
// returns how many tries came before, and ok false when the message is
// not due any more (another took it, or ended it): a try with one before
// it may follow a send whose reply was lost, or a worker that died
// between its send and its mark, so the sender looks for the message at
// the provider first.
func (s *Store) MessageTry(ctx context.Context, id int64, lease time.Duration) (before int, ok bool, err error) {
	err = s.retry(ctx, "message try", fmt.Sprint(id), func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `UPDATE caller_message SET attempts = attempts + 1, not_before = $2::timestamptz + $3::interval
WHERE message_id = $1 AND status = 'due' AND (not_before IS NULL OR not_before <= $2)
RETURNING attempts - 1`, id, s.now(), lease).Scan(&before)
		ok = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("message try %d: %w", id, err)
	}
	return before, ok, nil
}

// MessageDone records how a due message ended: sent (with the
// provider's id), not_consented, undeliverable or stale. A message ends
// once; a second mark changes nothing.
func (s *Store) MessageDone(ctx context.Context, id int64, status booking.MessageStatus, ch booking.Channel, providerID, why string) error {
	return s.retry(ctx, "message done", fmt.Sprint(id), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
UPDATE caller_message SET status = $2, channel = nullif($3, ''), provider_id = nullif($4, ''), last_error = nullif($5, ''),
    sent_at = CASE WHEN $2 = 'sent' THEN $6::timestamptz END
WHERE message_id = $1 AND status = 'due'`, id, string(status), string(ch), providerID, booking.Scrub(why), s.now())
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

// MessageFailed records a failed attempt of a message that stays due,
// and holds it back for its own backoff: a second after the first
// failure, doubling to five minutes. The other messages go on meanwhile.
func (s *Store) MessageFailed(ctx context.Context, id int64, why string) error {
	return s.retry(ctx, "message failed", fmt.Sprint(id), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE caller_message SET last_error = $2,
    not_before = $3::timestamptz + make_interval(secs => least(power(2, least(attempts - 1, 16)), 300))
WHERE message_id = $1 AND status = 'due'`, id, booking.Scrub(why), s.now())
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

// QueueReminder queues the reminder of booking id under key, once: only
// while the store holds it confirmed with a reminder due before its start
// (booking.remind_at, migration 027). It reports whether one is queued,
// now or before; the 'reminder_due' event queues it, as every decision
// queues its message.
func (s *Store) QueueReminder(ctx context.Context, key string, id uuid.UUID) (bool, error) {
	var queued bool
	err := s.retry(ctx, "queue reminder", key, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
WITH b AS (
    SELECT booking_id FROM booking
    WHERE request_key = $1 AND booking_id = $2 AND status = 'confirmed' AND remind_at IS NOT NULL AND starts_at > $3
), e AS (
    INSERT INTO booking_event (request_key, booking_id, kind, detail)
    SELECT $1, b.booking_id, 'reminder_due', '{}' FROM b
    WHERE NOT EXISTS (SELECT 1 FROM caller_message WHERE request_key = $1 AND kind = 'reminder')
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM b)`, key, id, s.now()).Scan(&queued)
	})
	if err != nil {
		return false, fmt.Errorf("queue reminder %s: %w", key, err)
	}
	return queued, nil
}

// QueueMissingMessages queues the confirmation of up to limit live
// bookings that start after from, carry a contact, and have no message
// queued at all: bookings made before the outbox (migration 026), or
// written by a path that queued none. It returns how many it queued; the
// sender decides, from the sealed contact, whether each may be sent.
func (s *Store) QueueMissingMessages(ctx context.Context, from time.Time, limit int) (int, error) {
	var n int64
	err := s.retry(ctx, "queue missing messages", "", func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `
INSERT INTO caller_message (request_key, kind, event_id)
SELECT b.request_key, CASE WHEN b.replaces_request_key IS NULL THEN 'confirmed' ELSE 'rescheduled' END,
       coalesce((SELECT max(event_id) FROM booking_event e WHERE e.booking_id = b.booking_id), 0)
FROM booking b JOIN booking_contact c ON c.booking_id = b.booking_id AND c.sealed IS NOT NULL
WHERE b.status = 'confirmed' AND b.starts_at > $1
  AND NOT EXISTS (SELECT 1 FROM caller_message m WHERE m.request_key = b.request_key AND m.kind <> 'code')
ORDER BY b.starts_at LIMIT $2
ON CONFLICT (agency_no, request_key, kind) WHERE kind <> 'code' DO NOTHING`, from, limit)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("queue missing messages: %w", err)
	}
	return int(n), nil
}

// OverdueMessages counts the messages due since before before: a sender
// that is not running, or a provider that keeps failing.
func (s *Store) OverdueMessages(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM caller_message
WHERE status = 'due' AND created_at < $1 AND (not_before IS NULL OR not_before < $1)`, before).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("overdue messages: %w", err)
	}
	return n, nil
}

// refused is the booking key asked for and the store refused: its intent
// under its key, with no status.
func (s *Store) refused(ctx context.Context, key string) (booking.Booking, error) {
	r, _, err := scanRefusal(s.pool.QueryRow(ctx, "SELECT "+refusalColumns+" FROM booking_refusal WHERE request_key = $1", key))
	if err != nil {
		return booking.Booking{}, fmt.Errorf("refusal %s: %w", key, err)
	}
	return booking.Booking{RequestKey: key, Intent: r.Intent, PolicyVersion: r.PolicyVersion}, nil
}
