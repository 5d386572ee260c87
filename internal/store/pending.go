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
