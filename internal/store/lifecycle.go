package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Lookup is the authoritative answer to "does this booking exist, and in
// what state": booking.ErrNotFound means it does not.
func (s *Store) Lookup(ctx context.Context, key string) (booking.Booking, error) {
	b, _, err := scanBooking(s.pool.QueryRow(ctx, "SELECT "+bookingColumns+" FROM booking WHERE request_key = $1", key))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Booking{}, fmt.Errorf("lookup %s: %w", key, booking.ErrNotFound)
	}
	if err != nil {
		return booking.Booking{}, fmt.Errorf("lookup %s: %w", key, err)
	}
	return b, nil
}

// ConfirmRequest confirms a key's hold. Contact, when set, is the one the
// caller gave with the book that confirms it; it replaces the hold's.
type ConfirmRequest struct {
	RequestKey string
	Contact    *booking.Contact
}

// Confirm turns a live hold into a confirmed booking. Confirming a confirmed
// booking returns it unchanged; a hold past its expiry becomes expired and
// is returned as such, so the caller learns the slot was not kept.
func (s *Store) Confirm(ctx context.Context, req ConfirmRequest) (booking.Booking, error) {
	key := req.RequestKey
	if req.Contact.HasPlain() {
		sealed, err := s.SealContact(ctx, key, *req.Contact, "")
		if err != nil {
			return booking.Booking{}, err
		}
		req.Contact = sealed
	}
	var out booking.Booking
	err := s.retry(ctx, "confirm", key, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			out, err = s.confirm(ctx, tx, key)
			if err != nil || out.Status != booking.StatusConfirmed {
				return err
			}
			return s.keepContact(ctx, tx, out, req.Contact.SealedBox())
		})
	})
	return out, err
}

// keepContact writes the contact a confirming book brought. A retried
// confirm writes the same box again, which changes nothing.
func (s *Store) keepContact(ctx context.Context, tx pgx.Tx, b booking.Booking, box []byte) error {
	if box == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `
INSERT INTO booking_contact (booking_id, sealed, retain_until) VALUES ($1, $2, $3)
ON CONFLICT (booking_id) DO UPDATE SET sealed = EXCLUDED.sealed, retain_until = EXCLUDED.retain_until,
    name = NULL, phone = NULL, email = NULL`,
		b.BookingID, box, b.Intent.EndsAt.Add(s.cfg.ContactRetention))
	return err
}

func (s *Store) confirm(ctx context.Context, tx pgx.Tx, key string) (booking.Booking, error) {
	b, _, err := scanBooking(tx.QueryRow(ctx, "SELECT "+bookingColumns+" FROM booking WHERE request_key = $1", key))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Booking{}, booking.ErrNotFound
	}
	if err != nil || b.Status != booking.StatusHeld {
		return b, err
	}
	// Take the hold's resource locks, as Commit does and in the same order,
	// before deciding: a commit that finds this hold expired counts it as
	// free, so the two must not both win.
	ids := b.Intent.Resources()
	slices.Sort(ids)
	if _, err := tx.Exec(ctx, "SELECT FROM resource WHERE resource_id = ANY($1) ORDER BY resource_id FOR NO KEY UPDATE", ids); err != nil {
		return booking.Booking{}, err
	}
	if b, err = lockBooking(ctx, tx, key); err != nil || b.Status != booking.StatusHeld {
		return b, err
	}
	now := s.now()
	if !b.HoldExpiresAt.After(now) {
		return expire(ctx, tx, b, now)
	}
	b.Status, b.CommittedAt = booking.StatusConfirmed, &now
	if err := tx.QueryRow(ctx, "UPDATE booking SET status = 'confirmed', committed_at = $2 WHERE booking_id = $1 RETURNING remind_at",
		b.BookingID, now).Scan(&b.RemindAt); err != nil {
		return booking.Booking{}, err
	}
	if b.RemindAt != nil {
		*b.RemindAt = b.RemindAt.UTC()
	}
	if err := releaseReplacedOnConfirm(ctx, tx, b, now); err != nil {
		return booking.Booking{}, err
	}
	return b, event(ctx, tx, b, "confirmed", nil)
}

// ReleaseRequest cancels a booking. (A reschedule releases the booking it
// replaces itself, in the commit or confirm of the new one.)
type ReleaseRequest struct {
	RequestKey string
	// ReplacedBy, when set, releases the booking for the reschedule to
	// that key rather than cancel it: a move the store lost, applied again
	// when its new booking could not be restored.
	ReplacedBy string
}

// Release cancels a booking and frees its capacity at once. Releasing a
// booking that is no longer live, or whose viewing is over, returns it
// unchanged.
func (s *Store) Release(ctx context.Context, req ReleaseRequest) (booking.Booking, error) {
	var out booking.Booking
	err := s.retry(ctx, "release", req.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b, err := lockBooking(ctx, tx, req.RequestKey)
			// A viewing that is over happened (or not) as recorded: a
			// cancel afterwards changes nothing.
			if err != nil || !b.Status.Live() || !b.Intent.EndsAt.After(s.now()) {
				out = b
				return err
			}
			out, err = release(ctx, tx, b, req.ReplacedBy, s.now())
			return err
		})
	})
	return out, err
}

func release(ctx context.Context, tx pgx.Tx, b booking.Booking, replacedBy string, now time.Time) (booking.Booking, error) {
	b.Status, b.ReleasedAt = booking.StatusCancelled, &now
	if replacedBy != "" {
		b.Status, b.ReplacedByRequestKey = booking.StatusReleasedForReschedule, replacedBy
	}
	_, err := tx.Exec(ctx, `
WITH b AS (
    UPDATE booking SET status = $2, released_at = $3, replaced_by_request_key = $4 WHERE booking_id = $1
)
UPDATE booking_resource SET live = false WHERE booking_id = $1`, b.BookingID, b.Status, now, nullable(replacedBy))
	if err != nil {
		return booking.Booking{}, err
	}
	return b, event(ctx, tx, b, string(b.Status), map[string]any{"replaced_by": replacedBy})
}

func expire(ctx context.Context, tx pgx.Tx, b booking.Booking, now time.Time) (booking.Booking, error) {
	if _, err := tx.Exec(ctx, expireSQL, []uuid.UUID{b.BookingID}, now); err != nil {
		return booking.Booking{}, err
	}
	b.Status, b.ReleasedAt = booking.StatusExpired, &now
	return b, nil
}

// expireSQL expires the given holds if they are still held: the status
// guard makes it safe to run for a hold someone else already settled.
const expireSQL = `
WITH e AS (
    UPDATE booking SET status = 'expired', released_at = $2
    WHERE booking_id = ANY($1) AND status = 'held' RETURNING booking_id, request_key
), r AS (
    UPDATE booking_resource SET live = false WHERE booking_id IN (SELECT booking_id FROM e)
)
INSERT INTO booking_event (request_key, booking_id, kind) SELECT request_key, booking_id, 'expired' FROM e`

func queueExpire(b *pgx.Batch, ids []uuid.UUID, now time.Time) { b.Queue(expireSQL, ids, now) }

// ExpireHolds expires up to limit holds past their expiry and returns how
// many it expired. Commits also expire the stale holds they run into, so
// this only tidies up; correctness does not wait for it.
func (s *Store) ExpireHolds(ctx context.Context, limit int) (int, error) {
	var n int
	err := s.retry(ctx, "expire holds", "", func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			now := s.now()
			rows, err := tx.Query(ctx, `
SELECT booking_id FROM booking WHERE status = 'held' AND hold_expires_at <= $1
ORDER BY hold_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
			if err != nil {
				return err
			}
			due, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			if err != nil || len(due) == 0 {
				return err
			}
			_, err = tx.Exec(ctx, expireSQL, due, now)
			n = len(due)
			return err
		})
	})
	return n, err
}

func lockBooking(ctx context.Context, tx pgx.Tx, key string) (booking.Booking, error) {
	b, _, err := scanBooking(tx.QueryRow(ctx, "SELECT "+bookingColumns+" FROM booking WHERE request_key = $1 FOR UPDATE", key))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Booking{}, booking.ErrNotFound
	}
	return b, err
}

func event(ctx context.Context, tx pgx.Tx, b booking.Booking, kind string, detail any) error {
	batch := &pgx.Batch{}
	var id *uuid.UUID // none for a key the store has no booking of
	if b.BookingID != uuid.Nil {
		id = &b.BookingID
	}
	queueEvent(batch, b.RequestKey, id, kind, detail)
	return tx.SendBatch(ctx, batch).Close()
}

// releaseReplacedOnConfirm releases the booking a confirmed hold replaces,
// in the confirm's transaction, as a confirming commit does.
func releaseReplacedOnConfirm(ctx context.Context, tx pgx.Tx, b booking.Booking, now time.Time) error {
	if b.Intent.Replaces == "" {
		return nil
	}
	old, err := lockBooking(ctx, tx, b.Intent.Replaces)
	if errors.Is(err, booking.ErrNotFound) {
		return booking.Rejectf(booking.CodeInvalidReplacement, "there is no booking %q to reschedule", b.Intent.Replaces)
	}
	if err != nil {
		return err
	}
	if old.Status != booking.StatusConfirmed {
		// Cancelled, or replaced by another booking meanwhile: confirming
		// would leave two replacements live, or turn a move into a booking.
		return booking.Rejectf(booking.CodeInvalidReplacement, "booking %q is %s and cannot be rescheduled", old.RequestKey, old.Status)
	}
	_, err = release(ctx, tx, old, b.RequestKey, now)
	return err
}
