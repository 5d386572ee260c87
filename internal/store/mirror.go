package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// RecordMirror stores the calendar event id and CRM reference of a booking.
// It only writes (and logs an event) when something changed, so re-syncing
// a booking any number of times leaves one trace.
func (s *Store) RecordMirror(ctx context.Context, m booking.MirrorRecord) (booking.Booking, error) {
	var out booking.Booking
	err := s.retry(ctx, "record mirror", m.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b, err := lockBooking(ctx, tx, m.RequestKey)
			if err != nil {
				return err
			}
			out = b
			changed := map[string]string{}
			if m.ProviderEventID != "" && m.ProviderEventID != b.ProviderEventID {
				changed["provider_event_id"], out.ProviderEventID = m.ProviderEventID, m.ProviderEventID
			}
			if m.CRMRef != "" && m.CRMRef != b.CRMRef {
				changed["crm_ref"], out.CRMRef = m.CRMRef, m.CRMRef
			}
			if len(changed) == 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, "UPDATE booking SET provider_event_id = $2, crm_ref = $3 WHERE booking_id = $1",
				b.BookingID, nullable(out.ProviderEventID), nullable(out.CRMRef)); err != nil {
				return err
			}
			return event(ctx, tx, out, "mirrored", changed)
		})
	})
	return out, err
}

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
