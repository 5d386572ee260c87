package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Retention of what outlives a booking's contact (migration 007): a
// booking past its period is anonymised, a refusal deleted, and an event
// past the log's period, anonymised by then, deleted.

// ApplyRetention retires at most limit request keys past the booking
// retention and deletes at most limit events past the log's, and returns
// how many of each it did, together.
func (s *Store) ApplyRetention(ctx context.Context, limit int) (int, error) {
	var n int
	err := s.retry(ctx, "apply retention", "", func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// The event log lets this transaction, and no other, rewrite it.
			if _, err := tx.Exec(ctx, "SET LOCAL bookingsaga.retention = 'on'"); err != nil {
				return err
			}
			now := s.now()
			old, err := dueKeys(ctx, tx, now.Add(-s.cfg.BookingRetention), limit)
			if err != nil {
				return err
			}
			b := &pgx.Batch{}
			for _, key := range old {
				queueAnonymise(b, key, booking.AnonymousPrefix+uuid.NewString(), now)
			}
			// Webhook deliveries carry request keys; a receiver has had
			// them for a week. Pending marks of keys never decided go
			// with the keys.
			b.Queue(`DELETE FROM webhook_delivery WHERE delivered_at <= $1`, now.Add(-deliveredRetention))
			b.Queue(`DELETE FROM webhook_pending WHERE marked_at <= $1`, now.Add(-s.cfg.BookingRetention))
			// A call reconciliation could not settle carries a sealed
			// contact: it goes when a contact would.
			b.Queue(`DELETE FROM pending_call WHERE answered_at <= $1`, now.Add(-s.cfg.ContactRetention))
			// A reply's sid, kept so that it acts once, goes when a contact would.
			b.Queue(`DELETE FROM text_reply WHERE received_at <= $1`, now.Add(-s.cfg.ContactRetention))
			b.Queue(`DELETE FROM find_attempt WHERE window_start <= $1`, now.Add(-findAttemptRetention))
			b.Queue(`DELETE FROM unlock_code WHERE expires_at <= $1`, now.Add(-findAttemptRetention))
			// An expired link's page says so for a week, then says it knows none.
			b.Queue(`DELETE FROM vault.caller_link WHERE expires_at <= $1`, now.Add(-expiredLinkRetention))
			var events int64
			b.Queue(expireEventsSQL, now.Add(-s.cfg.EventRetention), limit).Exec(func(tag pgconn.CommandTag) error {
				events = tag.RowsAffected()
				return nil
			})
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			n = len(old) + int(events)
			return nil
		})
	})
	return n, err
}

// expiredLinkRetention is how long a caller's link is kept past its
// expiry, for its page to say it expired rather than that it is unknown.
const expiredLinkRetention = 7 * 24 * time.Hour

// deliveredRetention is how long a delivered webhook is kept, for an
// operator looking into a receiver's complaint.
const deliveredRetention = 7 * 24 * time.Hour

// dueKeys are the keys past the cutoff, each once: bookings whose viewing
// ended before it (a hold is settled first, by expiry), refusals decided
// before it, and keys that left only a data key or events (a contact
// sealed, or erased, for a request that never came to either).
func dueKeys(ctx context.Context, tx pgx.Tx, cutoff time.Time, limit int) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, q := range dueKeysSQL {
		rows, err := tx.Query(ctx, q, cutoff, limit)
		if err != nil {
			return nil, err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

var dueKeysSQL = []string{
	`SELECT request_key FROM booking WHERE anonymised_at IS NULL AND status <> 'held' AND ends_at <= $1
ORDER BY ends_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
	`SELECT request_key FROM booking_refusal WHERE decided_at <= $1
ORDER BY decided_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
	`SELECT k.request_key FROM vault.contact_key k WHERE k.created_at <= $1
  AND NOT EXISTS (SELECT 1 FROM booking b WHERE b.request_key = k.request_key)
  AND NOT EXISTS (SELECT 1 FROM booking_refusal r WHERE r.request_key = k.request_key)
ORDER BY k.created_at LIMIT $2`,
	`SELECT request_key FROM (
  SELECT DISTINCT e.request_key FROM booking_event e WHERE e.occurred_at <= $1 AND e.request_key NOT LIKE 'anon-%'
    AND NOT EXISTS (SELECT 1 FROM booking b WHERE b.request_key = e.request_key)
    AND NOT EXISTS (SELECT 1 FROM booking_refusal r WHERE r.request_key = e.request_key)) k
LIMIT $2`,
}

// queueAnonymise gives old its anonymous key, anon, wherever old stands:
// the booking (whose CRM reference goes too), the partner of a
// reschedule, events and their details, drift flags; and deletes its
// refusal and its data key's row.
func queueAnonymise(b *pgx.Batch, old, anon string, now time.Time) {
	b.Queue(`UPDATE booking SET request_key = $2, crm_ref = NULL, anonymised_at = $3 WHERE request_key = $1`, old, anon, now)
	b.Queue(`UPDATE booking SET replaces_request_key = $2 WHERE replaces_request_key = $1`, old, anon)
	b.Queue(`UPDATE booking SET replaced_by_request_key = $2 WHERE replaced_by_request_key = $1`, old, anon)
	b.Queue(`UPDATE booking_event SET request_key = $2 WHERE request_key = $1`, old, anon)
	b.Queue(`DELETE FROM caller_message WHERE request_key = $1`, old)
	// The details that name old: its own events', and its partner's.
	b.Queue(`UPDATE booking_event SET detail = replace(detail::text, to_json($1::text)::text, to_json($2::text)::text)::jsonb
WHERE request_key IN (SELECT $2 UNION SELECT request_key FROM booking WHERE replaces_request_key = $2 OR replaced_by_request_key = $2)
  AND detail::text LIKE '%' || to_json($1::text)::text || '%'`, old, anon)
	b.Queue(`UPDATE drift_flag SET request_key = $2 WHERE request_key = $1`, old, anon)
	b.Queue(`DELETE FROM booking_refusal WHERE request_key = $1`, old)
	b.Queue(`DELETE FROM vault.contact_key WHERE request_key = $1`, old)
}

// expireEventsSQL deletes events past the log's retention whose key was
// anonymised; the log's own retention is never shorter than the
// bookings', so by then every key is.
const expireEventsSQL = `
DELETE FROM booking_event WHERE event_id IN (
    SELECT event_id FROM booking_event
    WHERE occurred_at <= $1 AND request_key LIKE 'anon-%'
    ORDER BY occurred_at LIMIT $2)`

// MayRewriteEvents reports whether this login may apply the event log's
// retention (migration 016: the retention role, or the log's owner in a
// single-role deployment).
func (s *Store) MayRewriteEvents(ctx context.Context) (bool, error) {
	var may bool
	if err := s.pool.QueryRow(ctx, `SELECT bookingsaga_may_rewrite()`).Scan(&may); err != nil {
		return false, fmt.Errorf("may rewrite events: %w", err)
	}
	return may, nil
}
