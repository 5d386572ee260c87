package store

import (
	"context"

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
			now := s.now()
			var old []string
			for _, q := range dueKeysSQL {
				rows, err := tx.Query(ctx, q, now.Add(-s.cfg.BookingRetention), limit)
				if err != nil {
					return err
				}
				keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					return err
				}
				old = append(old, keys...)
			}
			anon := make([]string, len(old))
			for i := range old {
				anon[i] = booking.AnonymousPrefix + uuid.NewString()
			}
			b := &pgx.Batch{}
			b.Queue(`UPDATE booking b SET request_key = m.anon, crm_ref = NULL, anonymised_at = $3
FROM unnest($1::text[], $2::text[]) m(old, anon) WHERE b.request_key = m.old`, old, anon, now)
			for _, q := range renameSQL {
				b.Queue(q, old, anon)
			}
			b.Queue(`DELETE FROM booking_refusal WHERE request_key = ANY($1)`, old)
			b.Queue(`DELETE FROM vault.contact_key WHERE request_key = ANY($1)`, old)
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

// dueKeysSQL finds the keys past retention: bookings whose viewing ended
// before the cutoff (a hold is settled first, by expiry), and refusals
// decided before it.
var dueKeysSQL = []string{
	`SELECT request_key FROM booking WHERE anonymised_at IS NULL AND status <> 'held' AND ends_at <= $1
ORDER BY ends_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
	`SELECT request_key FROM booking_refusal WHERE decided_at <= $1
ORDER BY decided_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
}

// renameSQL gives each old key ($1) its anonymous one ($2) wherever a
// row outlives it, so a reschedule's pair and a booking's events still
// read together.
var renameSQL = []string{
	`UPDATE booking b SET replaces_request_key = m.anon
FROM unnest($1::text[], $2::text[]) m(old, anon) WHERE b.replaces_request_key = m.old`,
	`UPDATE booking b SET replaced_by_request_key = m.anon
FROM unnest($1::text[], $2::text[]) m(old, anon) WHERE b.replaced_by_request_key = m.old`,
	`UPDATE booking_event e SET request_key = m.anon
FROM unnest($1::text[], $2::text[]) m(old, anon) WHERE e.request_key = m.old`,
	`UPDATE drift_flag f SET request_key = m.anon
FROM unnest($1::text[], $2::text[]) m(old, anon) WHERE f.request_key = m.old`,
}

// expireEventsSQL deletes events past the log's retention whose key was
// anonymised; the log's own retention is never shorter than the
// bookings', so by then every key is.
const expireEventsSQL = `
DELETE FROM booking_event WHERE event_id IN (
    SELECT event_id FROM booking_event
    WHERE occurred_at <= $1 AND request_key LIKE 'anon-%'
    ORDER BY occurred_at LIMIT $2)`
