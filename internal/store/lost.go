package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A store restored from an older backup, or a lagging replica promoted,
// has lost decisions its sagas still hold. These record them again, each
// only for a key the store has no decision on at all.

// RecordLoss records, as the store's decision on b's key, that the booking
// its saga confirmed and the store lost is not booked: an operator
// released it rather than restore it (the caller is told). A key the
// store has any decision on is left as it is.
func (s *Store) RecordLoss(ctx context.Context, b booking.Booking, note string) error {
	r := booking.Refusal{RequestKey: b.RequestKey, Outcome: booking.RefusedRejected, Code: booking.CodeBookingLost,
		Message: "the booking store lost this booking and an operator released it: " + note, Intent: b.Intent,
		PolicyVersion: b.PolicyVersion, DecidedAt: s.now()}
	return s.retry(ctx, "record loss", b.RequestKey, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var known bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT FROM booking WHERE request_key = $1)", b.RequestKey).Scan(&known); err != nil || known {
				return err
			}
			batch := &pgx.Batch{}
			queueRefusal(batch, r, b.Intent.Fingerprint())
			return tx.SendBatch(ctx, batch).Close()
		})
	})
}

// RecordRelease records again a booking the store lost together with its
// release (cancelled, or released for the reschedule to replacedBy): its
// saga let it go, and the caller was told so. A released booking occupies
// nothing, so this decides between no one and needs no locks; it makes
// the store remember the key as its caller last heard it, and closes the
// key's store_lost_booking flags: there is nothing left to restore. Only
// a viewing still to come is recorded, and never over a booking id the
// store holds (retention renames a key but keeps its booking id, so this
// never brings back a key it took away). It reports whether it wrote.
func (s *Store) RecordRelease(ctx context.Context, b booking.Booking, status booking.Status, replacedBy string) (bool, error) {
	if status.Live() {
		return false, fmt.Errorf("record release %s: %s is not a release", b.RequestKey, status)
	}
	in := b.Intent.Normalize()
	extras := in.ExtraResources
	if extras == nil {
		extras = []string{}
	}
	created := b.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	detail, _ := json.Marshal(map[string]any{"status": status, "replaced_by": replacedBy,
		"why": "the store lost the booking and its release; recorded again from its saga"})
	var wrote bool
	err := s.retry(ctx, "record release", b.RequestKey, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, recordReleaseSQL, b.BookingID, b.RequestKey, status, in.PropertyID, in.AgentID, extras,
			in.StartsAt, in.EndsAt, in.TimeZone, b.PolicyVersion, in.Fingerprint(), nullable(in.Replaces), nullable(replacedBy),
			b.CommittedAt, created, s.now(), nullable(in.AgentPool), nullable(b.LocalStart), b.ZoneRules, detail)
		wrote = tag.RowsAffected() > 0
		return err
	})
	return wrote, err
}

// recordReleaseSQL writes a released booking and its event, for a key with
// no decision.
const recordReleaseSQL = `
WITH b AS (
    INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, extra_resource_ids,
        starts_at, ends_at, time_zone, policy_version, intent_fingerprint, replaces_request_key,
        replaced_by_request_key, committed_at, created_at, released_at, agent_pool_id, local_start, zone_rules, zone_rules_checked)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19
    WHERE NOT EXISTS (SELECT FROM booking_refusal WHERE request_key = $2)
      -- A viewing that is over is left as the store has it, as Release
      -- leaves it.
      AND $8::timestamptz > $16::timestamptz
    ON CONFLICT DO NOTHING
    RETURNING booking_id, request_key
)
-- Nothing is left to restore: the key's lost-booking flags close with it.
, f AS (
    UPDATE drift_flag SET resolved_at = $16, resolution_note = 'recorded released: ' || $3
    FROM b WHERE drift_flag.request_key = b.request_key AND drift_flag.kind = 'store_lost_booking' AND drift_flag.resolved_at IS NULL
)
INSERT INTO booking_event (request_key, booking_id, kind, detail) SELECT request_key, booking_id, 'release_recorded', $20 FROM b`
