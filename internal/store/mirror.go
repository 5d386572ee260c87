package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// RecordMirror stores the calendar event id and CRM reference of a booking.
// It only writes (and logs an event) when something changed, so re-syncing
// a booking any number of times leaves one trace. It is one statement
// (recordMirrorSQL), so the row's lock is held for that statement alone:
// the calendar's and the CRM's records of one booking came at once, and
// each waited for the other's transaction of six round trips.
func (s *Store) RecordMirror(ctx context.Context, m booking.MirrorRecord) error {
	return s.retry(ctx, "record mirror", m.RequestKey, func(ctx context.Context) error {
		var found bool
		err := s.pool.QueryRow(ctx, recordMirrorSQL, m.RequestKey, nullable(m.ProviderEventID), nullable(m.CRMRef)).Scan(&found)
		if err == nil && !found {
			err = booking.ErrNotFound
		}
		return err
	})
}

// recordMirrorSQL locks the booking of $1, sets whichever of the event id
// ($2) and CRM reference ($3) is given and differs, and logs a "mirrored"
// event naming those alone; it answers whether the booking exists.
const recordMirrorSQL = `WITH b AS (
    SELECT booking_id, nullif($2::text, provider_event_id) AS event_id, nullif($3::text, crm_ref) AS crm_ref
    FROM booking WHERE request_key = $1 FOR UPDATE
), u AS (
    UPDATE booking SET provider_event_id = coalesce(b.event_id, booking.provider_event_id), crm_ref = coalesce(b.crm_ref, booking.crm_ref)
    FROM b WHERE booking.booking_id = b.booking_id AND (b.event_id IS NOT NULL OR b.crm_ref IS NOT NULL)
    RETURNING booking.booking_id, b.event_id, b.crm_ref
), e AS (
    INSERT INTO booking_event (request_key, booking_id, kind, detail)
    SELECT $1, u.booking_id, 'mirrored', jsonb_strip_nulls(jsonb_build_object('provider_event_id', u.event_id, 'crm_ref', u.crm_ref))
    FROM u
)
SELECT EXISTS (SELECT FROM b)`

// ExpireHold expires one hold if it is past its expiry and returns the
// booking as it now stands. A hold confirmed in time is left confirmed.
func (s *Store) ExpireHold(ctx context.Context, key string) (booking.Booking, error) {
	var out booking.Booking
	err := s.retry(ctx, "expire hold", key, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b, err := lockBooking(ctx, tx, key)
			if err != nil {
				return err
			}
			out = b
			if now := s.now(); b.Status == booking.StatusHeld && !b.HoldExpiresAt.After(now) {
				out, err = expire(ctx, tx, b, now)
			}
			return err
		})
	})
	return out, err
}
