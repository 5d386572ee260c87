package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Decision reads what the store decided on key; booking.ErrNotFound means nothing
// yet, authoritatively.
func (s *Store) Decision(ctx context.Context, key string) (booking.Decision, error) {
	d, err := s.decision(ctx, "request_key = $1", key)
	if err != nil {
		return booking.Decision{}, fmt.Errorf("decision %s: %w", key, err)
	}
	return d, nil
}

// KeyByReference resolves the reference a caller quotes ("BS-7K2D-QF4M")
// to the key it names: one the store decided, or one whose call was
// answered pending and is not settled yet.
func (s *Store) KeyByReference(ctx context.Context, ref string) (string, error) {
	raw, err := receipt.ReferenceBytes(ref)
	if err != nil {
		return "", err
	}
	keys, err := s.referenceKeys(ctx, raw)
	if err != nil {
		return "", fmt.Errorf("key by reference %s: %w", ref, err)
	}
	switch len(keys) {
	case 0:
		return "", fmt.Errorf("key by reference %s: %w", ref, booking.ErrNotFound)
	case 1:
		return keys[0], nil
	}
	// Never another caller's booking: with two requests under one
	// reference, neither is answered by it.
	return "", booking.Rejectf(booking.CodeReferenceCollision,
		"reference %s names more than one request; ask for the booking by its request_key", ref)
}

// referenceKeysSQL lists the keys (at most two) whose reference is $1.
const referenceKeysSQL = `
SELECT request_key FROM booking WHERE reference = $1 AND request_key NOT LIKE 'anon-%'
UNION SELECT request_key FROM booking_refusal WHERE reference = $1
UNION SELECT request_key FROM pending_call WHERE reference = $1
LIMIT 2`

// referenceKeys are the keys (at most two) whose reference is raw.
func (s *Store) referenceKeys(ctx context.Context, raw []byte) ([]string, error) {
	rows, err := s.pool.Query(ctx, referenceKeysSQL, raw)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *Store) decision(ctx context.Context, where string, arg any) (booking.Decision, error) {
	b, _, err := scanBooking(s.pool.QueryRow(ctx, "SELECT "+bookingColumns+" FROM booking WHERE "+where, arg))
	if err == nil {
		return booking.Decision{Booking: &b}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return booking.Decision{}, err
	}
	r, _, err := scanRefusal(s.pool.QueryRow(ctx, "SELECT "+refusalColumns+" FROM booking_refusal WHERE "+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Decision{}, booking.ErrNotFound
	}
	if err != nil {
		return booking.Decision{}, err
	}
	return booking.Decision{Refusal: &r}, nil
}

const refusalColumns = `request_key, outcome, code, message, busy, intent, policy_version, decided_at, intent_fingerprint`

func scanRefusal(row pgx.Row) (booking.Refusal, []byte, error) {
	var r booking.Refusal
	var busy, intent []byte
	var fp []byte
	if err := row.Scan(&r.RequestKey, &r.Outcome, &r.Code, &r.Message, &busy, &intent, &r.PolicyVersion, &r.DecidedAt, &fp); err != nil {
		return booking.Refusal{}, nil, err
	}
	if err := json.Unmarshal(busy, &r.Busy); err != nil {
		return booking.Refusal{}, nil, fmt.Errorf("refusal %s: busy: %w", r.RequestKey, err)
	}
	if err := json.Unmarshal(intent, &r.Intent); err != nil {
		return booking.Refusal{}, nil, fmt.Errorf("refusal %s: intent: %w", r.RequestKey, err)
	}
	r.Intent = r.Intent.Normalize()
	r.DecidedAt = r.DecidedAt.UTC()
	if len(r.Busy) == 0 {
		r.Busy = nil
	}
	return r, fp, nil
}

// queueRefusal records a refusal and its event in the batch. A concurrent
// commit of the same key and intent, under the same locks, can only have
// decided the same, so a row already there is kept.
func queueRefusal(b *pgx.Batch, r booking.Refusal, fingerprint []byte) {
	busy, _ := json.Marshal(r.Busy)
	if r.Busy == nil {
		busy = []byte("[]")
	}
	intent, _ := json.Marshal(r.Intent)
	b.Queue(`INSERT INTO booking_refusal (request_key, outcome, code, message, busy, intent, intent_fingerprint, policy_version, decided_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (agency_no, request_key) DO NOTHING`,
		r.RequestKey, r.Outcome, r.Code, r.Message, busy, intent, fingerprint, r.PolicyVersion, r.DecidedAt)
	queueEvent(b, r.RequestKey, nil, r.Outcome, map[string]any{"code": r.Code, "intent": r.Intent, "busy": r.Busy})
}

// replayRefusal answers a key the store already refused: with the same
// refusal if the intent matches, request_key_reused otherwise.
func replayRefusal(r booking.Refusal, fingerprint []byte, req CommitRequest) (Outcome, error) {
	if r.Outcome == booking.RefusedWithdrawn {
		return Outcome{}, r.Err() // its caller let it go, whatever it asked
	}
	if !slices.Equal(fingerprint, req.Intent.Fingerprint()) {
		return Outcome{}, reused(req.RequestKey)
	}
	if r.Outcome == booking.RefusedConflict {
		return Outcome{Conflict: &Conflict{Busy: r.Busy}, Replayed: true}, nil
	}
	return Outcome{}, r.Err()
}

func reused(key string) error {
	return booking.Rejectf(booking.CodeRequestKeyReused,
		"request_key %q already stands for a different intent; a new choice needs a new key", key)
}

// Lapse records that an intent expired before anyone committed it, unless
// the key was decided meanwhile, and returns the decision in force.
func (s *Store) Lapse(ctx context.Context, key string, in booking.Intent, policyVersion string) (booking.Decision, error) {
	return s.refuseUndecided(ctx, "lapse", booking.Refusal{RequestKey: key, Outcome: booking.RefusedExpired,
		Code: booking.CodeIntentExpired, Message: "the choice lapsed before it was booked", Intent: in, PolicyVersion: policyVersion})
}

// refuseUndecided records r as the decision on its key, unless the key
// was decided meanwhile, and returns the decision in force: a decision
// that comes from outside a commit (a lapse, a withdrawal) but is kept as
// a commit's refusal is, and replayed to every later request.
func (s *Store) refuseUndecided(ctx context.Context, op string, r booking.Refusal) (booking.Decision, error) {
	in := r.Intent.Normalize()
	ids := in.Resources()
	slices.Sort(ids)
	intent, _ := json.Marshal(in)
	err := s.retry(ctx, op, r.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// A commit of the key holds these locks until it is decided:
			// waiting for them means one under way is seen, not raced.
			if _, err := tx.Exec(ctx, "SELECT FROM resource WHERE resource_id = ANY($1) ORDER BY resource_id FOR NO KEY UPDATE", ids); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, refuseUndecidedSQL, r.RequestKey, r.Outcome, r.Code, r.Message,
				intent, in.Fingerprint(), r.PolicyVersion, s.now())
			return err
		})
	})
	if err != nil {
		return booking.Decision{}, err
	}
	return s.Decision(ctx, r.RequestKey)
}

// refuseUndecidedSQL records a refusal and its event, for a key with no
// decision yet.
const refuseUndecidedSQL = `
WITH r AS (
    INSERT INTO booking_refusal (request_key, outcome, code, message, intent, intent_fingerprint, policy_version, decided_at)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8
    WHERE NOT EXISTS (SELECT 1 FROM booking WHERE request_key = $1)
    ON CONFLICT (agency_no, request_key) DO NOTHING
    RETURNING request_key
)
INSERT INTO booking_event (request_key, kind, detail) SELECT request_key, $2, jsonb_build_object('code', $3::text) FROM r`
