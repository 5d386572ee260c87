package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
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
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return booking.Handoff{}, false, fmt.Errorf("request handoff: %w", err)
	}
	err = s.retry(ctx, "request handoff", h.ConversationID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			out, created = h, true
			// xmax = 0 tells an insert from the update of the open one.
			err := tx.QueryRow(ctx, `
INSERT INTO handoff (conversation_id, topic, request_keys) VALUES ($1, $2, $3)
ON CONFLICT (agency_no, conversation_id, topic) WHERE resolved_at IS NULL
DO UPDATE SET request_keys = EXCLUDED.request_keys
RETURNING handoff_id, requested_at, xmax = 0`, h.ConversationID, h.Topic, h.RequestKeys).Scan(&out.ID, &out.RequestedAt, &created)
			if err != nil {
				return err
			}
			if out.HasCallback, err = sealReason(ctx, tx, out.ID, h, fresh); err != nil || !created {
				return err
			}
			// The receivers learn that a person is wanted, on what; the
			// caller's words stay in the store, for staff to read.
			_, err = tx.Exec(ctx, `SELECT webhook_handoff_requested($1)`, out.ID)
			return err
		})
	})
	if err != nil {
		return booking.Handoff{}, false, err
	}
	out.RequestedAt = out.RequestedAt.UTC()
	return out, created, nil
}

// OpenHandoffs lists the handoffs no one has resolved, oldest first,
// their reasons opened (empty once erased).
func (s *Store) OpenHandoffs(ctx context.Context) ([]booking.Handoff, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+handoffColumns+`
FROM handoff h LEFT JOIN vault.handoff_key k USING (handoff_id)
WHERE resolved_at IS NULL ORDER BY requested_at, handoff_id LIMIT $1`, MaxOpen)
	if err != nil {
		return nil, fmt.Errorf("open handoffs: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanHandoff)
	if err != nil {
		return nil, fmt.Errorf("open handoffs: %w", err)
	}
	return out, nil
}

// handoffColumns are what scanHandoff reads, the sealed reason with its key.
const handoffColumns = `h.handoff_id, h.conversation_id, h.topic, h.reason, h.reason_sealed, h.callback_sealed, k.data_key,
	h.request_keys, h.requested_at`

func scanHandoff(r pgx.CollectableRow) (booking.Handoff, error) {
	var h booking.Handoff
	var plain *string
	var box, callback, dek []byte
	if err := r.Scan(&h.ID, &h.ConversationID, &h.Topic, &plain, &box, &callback, &dek, &h.RequestKeys, &h.RequestedAt); err != nil {
		return h, err
	}
	h.RequestedAt, h.Reason, h.HasCallback = h.RequestedAt.UTC(), deref(plain), callback != nil
	if box != nil && dek != nil {
		words, err := open(dek, handoffAAD(h.ID), box)
		if err != nil {
			return h, fmt.Errorf("open handoff %d's reason: %w", h.ID, err)
		}
		h.Reason = string(words)
	}
	if callback != nil && dek != nil {
		plain, err := open(dek, callbackAAD(h.ID), callback)
		if err == nil {
			err = json.Unmarshal(plain, &h.Callback)
		}
		if err != nil {
			return h, fmt.Errorf("open handoff %d's callback: %w", h.ID, err)
		}
	}
	return h, nil
}

// sealReason seals h's reason and callback under the handoff's data key,
// made on first use; a handoff erased keeps neither. A request again
// without a callback keeps the one given before; hasCallback says whether
// one is kept.
func sealReason(ctx context.Context, tx pgx.Tx, id int64, h booking.Handoff, fresh []byte) (hasCallback bool, err error) {
	var dek []byte
	// The no-op update makes RETURNING give the key already there.
	err = tx.QueryRow(ctx, `
INSERT INTO vault.handoff_key (handoff_id, data_key) VALUES ($1, $2)
ON CONFLICT (handoff_id) DO UPDATE SET handoff_id = EXCLUDED.handoff_id
RETURNING data_key`, id, fresh).Scan(&dek)
	if err != nil {
		return false, err
	}
	var box, callback []byte
	if dek != nil {
		if box, err = seal(dek, handoffAAD(id), []byte(h.Reason)); err != nil {
			return false, err
		}
		if h.Callback != nil {
			plain, _ := json.Marshal(h.Callback) // a struct of strings
			if callback, err = seal(dek, callbackAAD(id), plain); err != nil {
				return false, err
			}
		}
	}
	err = tx.QueryRow(ctx, `UPDATE handoff SET reason = NULL, reason_sealed = $2, callback_sealed = coalesce($3, callback_sealed)
WHERE handoff_id = $1 RETURNING callback_sealed IS NOT NULL`, id, box, callback).Scan(&hasCallback)
	return hasCallback, err
}

// callbackAAD binds a sealed callback to its handoff.
func callbackAAD(id int64) string { return "handoff-callback:" + strconv.FormatInt(id, 10) }

// handoffAAD binds a sealed reason to its handoff, so that a box can't be
// passed off as another's (or as a contact).
func handoffAAD(id int64) string { return "handoff:" + strconv.FormatInt(id, 10) }

// ErrHandoffNotOpen means there is no unresolved handoff with that id.
var ErrHandoffNotOpen = errors.New("no open handoff with this id")

// ResolveHandoff closes a handoff once the caller was called back, with
// what was done; it then goes with the contacts' retention.
func (s *Store) ResolveHandoff(ctx context.Context, id int64, note string) (booking.Handoff, error) {
	var h booking.Handoff
	var at time.Time
	err := s.retry(ctx, "resolve handoff", strconv.FormatInt(id, 10), func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `WITH h AS (
    UPDATE handoff SET resolved_at = $3, note = $2 WHERE handoff_id = $1 AND resolved_at IS NULL RETURNING *
)
SELECT `+handoffColumns+` FROM h LEFT JOIN vault.handoff_key k USING (handoff_id)`, id, note, s.now())
		if err != nil {
			return err
		}
		h, err = pgx.CollectExactlyOneRow(rows, scanHandoff)
		return err
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
