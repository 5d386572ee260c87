package store

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/internal/booking"
)

// commitFast tries the common commit in one round trip: a confirmation on
// capacity-1 resources with nothing to expire, no hold and no reschedule.
// The statement checks, in SQL, a subset of what the full path checks in Go
// (policy version, resources and kinds, zone, notice, bookable hours) and
// divides by zero when any fails; an overlap is refused by the exclusion
// constraint and a known key by the unique index. Any error means "not
// taken": the transaction is rolled back and the full two-round-trip path
// decides, precisely and with its typed outcome. So the fast path can only
// confirm what the full path would also confirm.
func (s *Store) commitFast(ctx context.Context, req CommitRequest) (Outcome, bool) {
	if req.Hold || req.Intent.Replaces != "" {
		return Outcome{}, false
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Outcome{}, false
	}
	defer conn.Release()
	now := s.now()
	bk := Booking{BookingID: uuid.New(), RequestKey: req.RequestKey, Status: booking.StatusConfirmed, Intent: req.Intent,
		PolicyVersion: req.ExpectedPolicyVersion, CreatedAt: now, CommittedAt: &now}
	ids := req.Intent.Resources()
	slices.Sort(ids)
	extras := req.Intent.ExtraResources
	if extras == nil {
		extras = []string{}
	}
	detail, _ := json.Marshal(map[string]any{"intent": req.Intent, "status": bk.Status, "policy_version": bk.PolicyVersion})
	var name, phone, email *string
	if c := req.Contact; c != nil && (c.Name != "" || c.Phone != "" || c.Email != "") {
		name, phone, email = nullable(c.Name), nullable(c.Phone), nullable(c.Email)
	}
	// One statement, so one implicit transaction and one round trip.
	if _, err := conn.Exec(ctx, fastInsertSQL, bk.BookingID, bk.RequestKey, req.Intent.PropertyID, req.Intent.AgentID, extras,
		req.Intent.StartsAt, req.Intent.EndsAt, req.Intent.TimeZone, req.ExpectedPolicyVersion,
		req.Intent.Fingerprint(), now, ids, detail, name, phone, email, req.Intent.EndsAt.Add(s.cfg.ContactRetention)); err != nil {
		return Outcome{}, false
	}
	return Outcome{Booking: bk}, true
}

// fastInsertSQL locks the resources in id order (as the full path does),
// then inserts the booking, its occupancy, its event and the contact only
// if every check holds; otherwise the division by zero aborts it. "now" is
// the later of the caller's clock and the database's after the locks, as
// the full path reads its clock after them.
const fastInsertSQL = `
WITH locked AS (
    SELECT resource_id, kind, capacity, time_zone FROM resource
    WHERE resource_id = ANY($12) ORDER BY resource_id FOR NO KEY UPDATE
), p AS (
    SELECT version, opens_at, closes_at, min_notice_minutes FROM policy WHERE is_current
), rs AS (
    SELECT l.resource_id, l.kind, l.capacity, l.time_zone, rb.before_minutes, rb.after_minutes
    FROM locked l JOIN resource_buffers rb USING (resource_id)
), ok AS (
    SELECT 1 / (CASE WHEN
        (SELECT count(*) FROM rs) = cardinality($12::text[])
        AND (SELECT count(*) FROM p) = 1
        AND (SELECT version FROM p) = $9
        AND (SELECT bool_and(capacity = 1) FROM rs)
        AND EXISTS (SELECT FROM rs WHERE resource_id = $3 AND kind = 'property' AND time_zone = $8)
        AND EXISTS (SELECT FROM rs WHERE resource_id = $4 AND kind = 'agent')
        AND $6::timestamptz >= greatest($11::timestamptz, clock_timestamp()) + make_interval(mins => (SELECT min_notice_minutes FROM p))
        AND ($6::timestamptz AT TIME ZONE $8)::date = ($7::timestamptz AT TIME ZONE $8)::date
        AND ($6::timestamptz AT TIME ZONE $8)::time >= (SELECT opens_at FROM p)
        AND ($7::timestamptz AT TIME ZONE $8)::time <= (SELECT closes_at FROM p)
    THEN 1 ELSE 0 END) AS one
), b AS (
    INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, extra_resource_ids,
        starts_at, ends_at, time_zone, policy_version, intent_fingerprint, committed_at, created_at)
    SELECT $1, $2, 'confirmed', $3, $4, $5, $6, $7, $8, $9, $10, $11, $11 FROM ok
    RETURNING booking_id
), r AS (
    INSERT INTO booking_resource (booking_id, resource_id, occupied, live, exclusive)
    SELECT b.booking_id, rs.resource_id,
           tstzrange($6::timestamptz - make_interval(mins => rs.before_minutes), $7::timestamptz + make_interval(mins => rs.after_minutes)),
           true, true
    FROM b, rs
), c AS (
    INSERT INTO booking_contact (booking_id, name, phone, email, retain_until)
    SELECT b.booking_id, $14, $15, $16, $17 FROM b
    WHERE $14::text IS NOT NULL OR $15::text IS NOT NULL OR $16::text IS NOT NULL
)
INSERT INTO booking_event (request_key, booking_id, kind, detail)
SELECT $2, b.booking_id, 'committed', $13 FROM b`
