package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// RecordOutcome records how a booking's viewing went (booking.Outcome's
// rules say which bookings take which), with an event the webhooks send
// as booking.outcome. The same outcome again changes nothing; another one
// corrects it, and is an event of its own.
func (s *Store) RecordOutcome(ctx context.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	if err := in.Validate(); err != nil {
		return booking.OutcomeOutput{}, err
	}
	var out booking.OutcomeOutput
	err := s.retry(ctx, "record outcome", in.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			out, err = s.recordOutcome(ctx, tx, in)
			return err
		})
	})
	return out, err
}

func (s *Store) recordOutcome(ctx context.Context, tx pgx.Tx, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	b, err := lockBooking(ctx, tx, in.RequestKey)
	if err != nil {
		return booking.OutcomeOutput{}, err
	}
	out := booking.OutcomeOutput{Booking: b}
	// A reminder counts once it went out, on either channel.
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM caller_message
WHERE request_key = $1 AND kind = 'reminder' AND status = 'sent')`, b.RequestKey).Scan(&out.Reminded)
	if err != nil || b.Outcome == in.Outcome {
		return out, err
	}
	now := s.now()
	if err := in.Outcome.Allowed(b, now); err != nil {
		return booking.OutcomeOutput{}, err
	}
	if _, err := tx.Exec(ctx, `UPDATE booking SET outcome = $2, outcome_at = $3 WHERE booking_id = $1`,
		b.BookingID, in.Outcome, now); err != nil {
		return booking.OutcomeOutput{}, err
	}
	detail := map[string]any{"outcome": in.Outcome, "reminded": out.Reminded, "property_id": b.Intent.PropertyID,
		"agent_id": b.Intent.AgentID}
	if b.Outcome != "" {
		detail["corrects"] = b.Outcome
	}
	if in.Note != "" {
		detail["note"] = in.Note
	}
	if err := event(ctx, tx, b, "outcome", detail); err != nil {
		return booking.OutcomeOutput{}, err
	}
	out.Booking.Outcome, out.Changed = in.Outcome, true
	return out, nil
}
