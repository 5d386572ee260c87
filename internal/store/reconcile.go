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

// BookingsStarting lists bookings (any status) that start in [from, to),
// ordered by start and key, after the cursor (start, key) of a previous
// page; at most limit.
func (s *Store) BookingsStarting(ctx context.Context, from, to time.Time, after booking.Cursor, limit int) ([]booking.Booking, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+bookingColumns+` FROM booking
WHERE starts_at >= $1 AND starts_at < $2 AND (starts_at, request_key) > ($3, $4)
ORDER BY starts_at, request_key LIMIT $5`, from, to, after.StartsAt, after.RequestKey, limit)
	if err != nil {
		return nil, fmt.Errorf("bookings starting %s: %w", from.Format(time.RFC3339), err)
	}
	defer rows.Close()
	var out []booking.Booking
	for rows.Next() {
		b, _, err := scanBooking(rows)
		if err != nil {
			return nil, fmt.Errorf("bookings starting: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Statuses is the status of each of keys' bookings the store holds, in
// one read: reconciliation compares a page of open sagas with it.
func (s *Store) Statuses(ctx context.Context, keys []string) (map[string]booking.Status, error) {
	rows, err := s.pool.Query(ctx, "SELECT request_key, status FROM booking WHERE request_key = ANY($1)", keys)
	if err != nil {
		return nil, fmt.Errorf("statuses: %w", err)
	}
	out := make(map[string]booking.Status, len(keys))
	var key string
	var st booking.Status
	_, err = pgx.ForEachRow(rows, []any{&key, &st}, func() error {
		out[key] = st
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("statuses: %w", err)
	}
	return out, nil
}

// Calendars lists the resources that have a calendar, by resource id.
func (s *Store) Calendars(ctx context.Context) ([]booking.ResourceCalendar, error) {
	rows, err := s.pool.Query(ctx, "SELECT resource_id, calendar_provider, calendar_id FROM resource WHERE calendar_id IS NOT NULL ORDER BY resource_id")
	if err != nil {
		return nil, fmt.Errorf("calendars: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[booking.ResourceCalendar])
}

// PurgeContacts erases contacts past their retention deadline, at most
// limit of each kind, and records each in the event log without the
// data: the booking and its audit trail stay.
func (s *Store) PurgeContacts(ctx context.Context, limit int) (int, error) {
	var n int
	err := s.retry(ctx, "purge contacts", "", func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			now := s.now()
			rows, err := tx.Exec(ctx, purgeRowsSQL, now, limit)
			if err != nil {
				return err
			}
			keys, err := tx.Exec(ctx, purgeKeysSQL, now, limit, s.cfg.ContactRetention)
			if err != nil {
				return err
			}
			// A handoff's reason is the caller's words: it goes with the
			// contacts' retention, counted from its resolution (or its
			// request, if no one resolved it).
			handoffs, err := tx.Exec(ctx, `DELETE FROM handoff WHERE handoff_id IN (SELECT handoff_id FROM handoff
WHERE coalesce(resolved_at, requested_at) + $2::interval <= $1 ORDER BY handoff_id LIMIT $3)`, now, s.cfg.ContactRetention, limit)
			n = int(rows.RowsAffected() + keys.RowsAffected() + handoffs.RowsAffected())
			return err
		})
	})
	return n, err
}

// purgeRowsSQL deletes stored contacts past their deadline, erases their
// data keys (the history's copies go unreadable with them), and records
// each purge.
const purgeRowsSQL = `
WITH due AS (
    SELECT booking_id FROM booking_contact WHERE retain_until <= $1
    ORDER BY retain_until LIMIT $2 FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM booking_contact c USING due WHERE c.booking_id = due.booking_id RETURNING c.booking_id
), erased AS (
    UPDATE vault.contact_key k SET data_key = NULL, erased_at = $1
    FROM gone JOIN booking b USING (booking_id) WHERE k.request_key = b.request_key AND k.data_key IS NOT NULL
)
INSERT INTO booking_event (request_key, booking_id, kind, detail)
SELECT b.request_key, b.booking_id, 'contact_purged', '{"reason":"retention"}' FROM gone JOIN booking b USING (booking_id)`

// purgeKeysSQL erases the data keys that no stored contact holds: a
// request that never came to a booking (it was refused, or lapsed) as
// long after its key was made, a booking's after its viewing.
const purgeKeysSQL = `
WITH due AS (
    SELECT k.request_key FROM vault.contact_key k
    LEFT JOIN booking b USING (request_key)
    LEFT JOIN booking_contact c USING (booking_id)
    WHERE k.data_key IS NOT NULL AND c.booking_id IS NULL
      AND coalesce(b.ends_at, k.created_at) + $3::interval <= $1
    ORDER BY k.created_at LIMIT $2 FOR UPDATE OF k SKIP LOCKED
)
UPDATE vault.contact_key k SET data_key = NULL, erased_at = $1 FROM due WHERE k.request_key = due.request_key`

// FlagDrift records a flag once; it reports whether this call created it.
func (s *Store) FlagDrift(ctx context.Context, f booking.Flag) (bool, error) {
	var created bool
	err := s.retry(ctx, "flag drift", f.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// A flag of what the store lost has no booking row to name.
			var id *uuid.UUID
			if f.BookingID != uuid.Nil {
				id = &f.BookingID
			}
			tag, err := tx.Exec(ctx, `INSERT INTO drift_flag (request_key, booking_id, kind, calendar_id, event_id, detail)
VALUES ($1, $2, $3, $4, $5, jsonb_build_object('detail', $6::text)) ON CONFLICT DO NOTHING`,
				f.RequestKey, id, f.Kind, f.CalendarID, f.EventID, f.Detail)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			created = true
			b := &pgx.Batch{}
			queueEvent(b, f.RequestKey, id, "drift_flagged", map[string]string{"kind": f.Kind, "calendar_id": f.CalendarID, "event_id": f.EventID})
			return tx.SendBatch(ctx, b).Close()
		})
	})
	return created, err
}

// MaxOpen bounds the operator's lists of open flags and hand-offs: the
// oldest come first, and the rest wait behind them.
const MaxOpen = 1000

// OpenFlags lists unresolved flags, oldest first, MaxOpen at most.
func (s *Store) OpenFlags(ctx context.Context) ([]booking.Flag, error) {
	rows, err := s.pool.Query(ctx, `SELECT flag_id, request_key, coalesce(booking_id, '00000000-0000-0000-0000-000000000000'), kind, calendar_id, event_id,
coalesce(detail->>'detail', ''), found_at FROM drift_flag WHERE resolved_at IS NULL ORDER BY found_at, flag_id LIMIT $1`, MaxOpen)
	if err != nil {
		return nil, fmt.Errorf("open flags: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Flag, error) {
		var f booking.Flag
		err := r.Scan(&f.ID, &f.RequestKey, &f.BookingID, &f.Kind, &f.CalendarID, &f.EventID, &f.Detail, &f.FoundAt)
		return f, err
	})
}

// ErrFlagNotOpen means there is no unresolved flag with that id.
var ErrFlagNotOpen = errors.New("no open flag with this id")

// ResolveFlag closes a flag with an operator's note, recorded in the
// booking's event log.
func (s *Store) ResolveFlag(ctx context.Context, id int64, note string) (booking.Flag, error) {
	var f booking.Flag
	err := s.retry(ctx, "resolve flag", fmt.Sprint(id), func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `UPDATE drift_flag SET resolved_at = $2, resolution_note = $3
WHERE flag_id = $1 AND resolved_at IS NULL RETURNING request_key, coalesce(booking_id, '00000000-0000-0000-0000-000000000000'), kind, calendar_id, event_id, found_at, resolved_at`,
				id, s.now(), note).Scan(&f.RequestKey, &f.BookingID, &f.Kind, &f.CalendarID, &f.EventID, &f.FoundAt, &f.ResolvedAt)
			if errors.Is(err, pgx.ErrNoRows) {
				// Resolved already with this very note: a retried call.
				err = tx.QueryRow(ctx, `SELECT request_key, coalesce(booking_id, '00000000-0000-0000-0000-000000000000'), kind, calendar_id, event_id, found_at, resolved_at
FROM drift_flag WHERE flag_id = $1 AND resolution_note = $2`, id, note).
					Scan(&f.RequestKey, &f.BookingID, &f.Kind, &f.CalendarID, &f.EventID, &f.FoundAt, &f.ResolvedAt)
				if errors.Is(err, pgx.ErrNoRows) {
					return ErrFlagNotOpen
				}
				f.ID, f.Note = id, note
				return err
			}
			if err != nil {
				return err
			}
			f.ID, f.Note = id, note
			return event(ctx, tx, booking.Booking{RequestKey: f.RequestKey, BookingID: f.BookingID}, "drift_resolved",
				map[string]any{"flag_id": id, "note": note})
		})
	})
	return f, err
}

// Events returns the log of one request key, oldest first.
func (s *Store) Events(ctx context.Context, key string) ([]booking.Event, error) {
	rows, err := s.pool.Query(ctx, "SELECT kind, detail::text, occurred_at FROM booking_event WHERE request_key = $1 ORDER BY event_id", key)
	if err != nil {
		return nil, fmt.Errorf("events %s: %w", key, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[booking.Event])
}
