package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Handoffs (migrations 019, 020): a caller's requests for a person.

// RequestHandoff records h, one open hand-off per conversation and topic:
// the same request again, or a new reason for it, while it is open updates
// the one recorded (created false). A new one goes out to every webhook
// endpoint as handoff.requested, in the same transaction, without the
// caller's words.
func (s *Store) RequestHandoff(ctx context.Context, h booking.Handoff) (out booking.Handoff, created bool, err error) {
	h.Reason = strings.TrimSpace(h.Reason)
	if err := h.Validate(); err != nil {
		return booking.Handoff{}, false, fmt.Errorf("request handoff: %w", err)
	}
	if h.RequestKeys == nil {
		h.RequestKeys = []string{}
	}
	err = s.retry(ctx, "request handoff", h.ConversationID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			out, created = h, true
			// xmax = 0 tells an insert from the update of the open one.
			err := tx.QueryRow(ctx, `
INSERT INTO handoff (conversation_id, topic, reason, request_keys) VALUES ($1, $2, $3, $4)
ON CONFLICT (conversation_id, topic) WHERE resolved_at IS NULL
DO UPDATE SET reason = EXCLUDED.reason, request_keys = EXCLUDED.request_keys
RETURNING handoff_id, requested_at, xmax = 0`, h.ConversationID, h.Topic, h.Reason, h.RequestKeys).Scan(&out.ID, &out.RequestedAt, &created)
			if err != nil || !created {
				return err
			}
			// The receivers learn that a person is wanted, on what; the
			// caller's words stay in the store, for staff to read.
			_, err = tx.Exec(ctx, `
INSERT INTO webhook_delivery (endpoint_id, event_type, payload)
SELECT endpoint_id, 'handoff.requested', jsonb_build_object('handoff_id', $1::bigint, 'conversation_id', $2::text,
    'topic', $3::text, 'request_keys', $4::text[], 'occurred_at', $5::timestamptz)
FROM webhook_endpoint`, out.ID, out.ConversationID, out.Topic, out.RequestKeys, out.RequestedAt)
			return err
		})
	})
	if err != nil {
		return booking.Handoff{}, false, err
	}
	out.RequestedAt = out.RequestedAt.UTC()
	return out, created, nil
}

// OpenHandoffs lists the handoffs no one has resolved, oldest first.
func (s *Store) OpenHandoffs(ctx context.Context) ([]booking.Handoff, error) {
	rows, err := s.pool.Query(ctx, `SELECT handoff_id, conversation_id, topic, reason, request_keys, requested_at
FROM handoff WHERE resolved_at IS NULL ORDER BY requested_at, handoff_id LIMIT $1`, MaxOpen)
	if err != nil {
		return nil, fmt.Errorf("open handoffs: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Handoff, error) {
		var h booking.Handoff
		err := r.Scan(&h.ID, &h.ConversationID, &h.Topic, &h.Reason, &h.RequestKeys, &h.RequestedAt)
		h.RequestedAt = h.RequestedAt.UTC()
		return h, err
	})
}

// ErrHandoffNotOpen means there is no unresolved handoff with that id.
var ErrHandoffNotOpen = errors.New("no open handoff with this id")

// ResolveHandoff closes a handoff once the caller was called back, with
// what was done; it then goes with the contacts' retention.
func (s *Store) ResolveHandoff(ctx context.Context, id int64, note string) (booking.Handoff, error) {
	var h booking.Handoff
	var at time.Time
	err := s.retry(ctx, "resolve handoff", strconv.FormatInt(id, 10), func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `UPDATE handoff SET resolved_at = $3, note = $2 WHERE handoff_id = $1 AND resolved_at IS NULL
RETURNING handoff_id, conversation_id, topic, reason, request_keys, requested_at`, id, note, s.now()).
			Scan(&h.ID, &h.ConversationID, &h.Topic, &h.Reason, &h.RequestKeys, &h.RequestedAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Handoff{}, fmt.Errorf("resolve handoff %d: %w", id, ErrHandoffNotOpen)
	}
	if err != nil {
		return booking.Handoff{}, err
	}
	at = s.now().UTC()
	h.RequestedAt, h.ResolvedAt, h.Note = h.RequestedAt.UTC(), &at, note
	return h, nil
}
