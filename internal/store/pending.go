package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// NotePending records that call was answered pending_reconciliation
// (migration 025): its first decision goes out as booking.settled, and
// reconciliation sends it again if Temporal never got it.
func (s *Store) NotePending(ctx context.Context, call booking.PendingCall) error {
	if err := call.Validate(); err != nil {
		return fmt.Errorf("note pending: %w", err)
	}
	call.AnsweredAt = s.now().Truncate(time.Microsecond) // as the column keeps it: the cursor compares the two
	doc, err := json.Marshal(call)
	if err != nil {
		return fmt.Errorf("note pending %s: %w", call.RequestKey, err)
	}
	return s.retry(ctx, "note pending", call.RequestKey, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `SELECT note_pending_call($1, $2, $3, $4)`, call.RequestKey, string(call.Op), doc, call.AnsweredAt)
		return err
	})
}

// PendingCalls returns up to limit calls answered pending before before,
// oldest first, from the one after after (nil: from the first).
func (s *Store) PendingCalls(ctx context.Context, before time.Time, after *booking.PendingCall, limit int) ([]booking.PendingCall, error) {
	from := booking.PendingCall{}
	if after != nil {
		from = *after
	}
	var out []booking.PendingCall
	err := s.retry(ctx, "pending calls", "", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `
SELECT call FROM pending_call
WHERE answered_at < $1 AND (answered_at, request_key, op) > ($2, $3, $4)
ORDER BY answered_at, request_key, op LIMIT $5`,
			before, from.AnsweredAt, from.RequestKey, string(from.Op), limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[booking.PendingCall])
		return err
	})
	return out, err
}

// SettlePending forgets call: reconciliation saw it decided, or handed
// it to the saga that decides it.
func (s *Store) SettlePending(ctx context.Context, call booking.PendingCall) error {
	return s.retry(ctx, "settle pending", call.RequestKey, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM pending_call WHERE request_key = $1 AND op = $2`, call.RequestKey, string(call.Op))
		return err
	})
}

// Unsettled reports whether a call on key was answered pending and is not
// settled yet: the store decided nothing on it, but may still.
func (s *Store) Unsettled(ctx context.Context, key string) (bool, error) {
	var found bool
	err := s.retry(ctx, "unsettled", key, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pending_call WHERE request_key = $1)`, key).Scan(&found)
	})
	return found, err
}

// Withdraw records a caller's cancel of key as the store's decision on
// it, when key was never decided and a booking call on it is still
// pending (booking.RefusedWithdrawn): the resend of that call, or any
// later one under key, then books nothing. It returns the decision in
// force; booking.ErrNotFound means there was nothing to withdraw.
func (s *Store) Withdraw(ctx context.Context, key string) (booking.Decision, error) {
	var calls []booking.PendingCall
	err := s.retry(ctx, "withdraw", key, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT call FROM pending_call WHERE request_key = $1 AND op <> 'cancel' ORDER BY answered_at`, key)
		if err != nil {
			return err
		}
		calls, err = pgx.CollectRows(rows, pgx.RowTo[booking.PendingCall])
		return err
	})
	if err != nil {
		return booking.Decision{}, fmt.Errorf("withdraw %s: %w", key, err)
	}
	if len(calls) == 0 {
		return s.Decision(ctx, key)
	}
	req := calls[0].Request
	in := req.Intent
	if calls[0].Op == booking.PendingReschedule {
		in.Replaces = calls[0].Replaces
	}
	d, err := s.refuseUndecided(ctx, "withdraw", booking.Refusal{RequestKey: key, Outcome: booking.RefusedWithdrawn,
		Code: booking.CodeCancelledBeforeBooked, Message: "the caller cancelled before it was booked", Intent: in,
		PolicyVersion: req.ExpectedPolicyVersion})
	if err != nil {
		return booking.Decision{}, fmt.Errorf("withdraw %s: %w", key, err)
	}
	return d, nil
}
