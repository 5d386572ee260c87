package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// commitState is what one commit attempt read, under its locks.
type commitState struct {
	resources []*lockedResource // sorted by ID
	missing   []string
	policy    *booking.Policy
	// remindAt is the inserted booking's reminder, read back from the
	// insert once the batch has run.
	remindAt *time.Time
	// existingFingerprint is set when the request_key is already booked.
	existingFingerprint []byte
	// refusal is set when the store already refused the request_key.
	refusal            *booking.Refusal
	refusalFingerprint []byte
	// replaced is the booking a reschedule replaces, locked; nil otherwise.
	replaced *replacedBooking
	// holding is set for a hold: it releases nothing, so the replaced
	// booking still occupies its slot (the exclusion constraint agrees).
	holding bool
	// members are the agents of the pool the request asks for, locked
	// beside its resources; the commit chooses among them. poolErr is the
	// refusal of a pool that does not exist.
	members []string
	poolErr error
	// startsRead is set once the resources' bookings' starts are read.
	startsRead bool
	// asked are the resources the request names itself.
	asked []string
	// referenceTaken is set when another request's key has this key's
	// spoken reference.
	referenceTaken bool
}

// replacedBooking is the booking a reschedule's commit releases in the
// same transaction, so the two never both hold, or both lose, the slot.
type replacedBooking struct {
	id         uuid.UUID
	status     booking.Status
	replacedBy string
	// intent is where and when it stands, and with whom.
	intent booking.Intent
}

// reassigns reports whether in moves the replaced booking to another
// agent and changes nothing else.
func (r *replacedBooking) reassigns(in booking.Intent) bool {
	return r != nil && r.intent.SameTimeAndPlace(in) && r.intent.AgentID != in.AgentID
}

type lockedResource struct {
	ID, Kind, TimeZone string
	Capacity           int
	rules              *booking.Rules
	// starts are the starts of its live bookings near the slot, and when
	// each was made, read when it has limits or is a pool's member.
	starts, created []time.Time
	// occupied is what the new booking would take of this resource,
	// buffers included.
	occupied booking.Span
	others   []occupant
}

// occupant is a live booking overlapping the requested time on a resource.
type occupant struct {
	booking.Span
	bookingID   uuid.UUID
	status      booking.Status
	holdExpires *time.Time
}

// lockResourcesSQL also switches the transaction to generic plans: custom
// plans would re-plan the statements after it on every commit, and their
// generic plans are index probes. (Riding on this statement saves a SET.)
const lockResourcesSQL = `
SELECT resource_id, kind, capacity, time_zone, rules, set_config('plan_cache_mode', 'force_generic_plan', true)
FROM resource WHERE resource_id = ANY($1) ORDER BY resource_id FOR NO KEY UPDATE`

// occupancySQL lists, per resource, the range the new booking would occupy
// and every live booking overlapping it (none: one row of NULLs), and the
// fingerprint of whatever the request_key already booked. OFFSET 0
// stops the planner flattening the LATERAL, which keeps the plan an index
// probe per resource.
const occupancySQL = `
SELECT rb.resource_id, rb.occ_from, rb.occ_to, lower(o.occupied), upper(o.occupied), o.booking_id, o.status, o.hold_expires_at,
       (SELECT intent_fingerprint FROM booking WHERE request_key = $4)
FROM (SELECT resource_id,
             $2::timestamptz - make_interval(mins => before_minutes) AS occ_from,
             $3::timestamptz + make_interval(mins => after_minutes) AS occ_to
      FROM resource_buffers WHERE resource_id = ANY($1)) rb
LEFT JOIN LATERAL (
    SELECT lo.occupied, b.booking_id, b.status, b.hold_expires_at
    FROM live_occupancy(rb.resource_id, tstzrange(rb.occ_from, rb.occ_to)) lo
    JOIN booking b ON b.booking_id = lo.booking_id
    OFFSET 0
) o ON true`

// readCommitState opens the transaction, locks the resources in ID order
// (the fixed order is what keeps concurrent commits from deadlocking), and
// reads everything the decision needs, in one round trip. The request_key is
// looked up after the locks, in the occupancy statement: a concurrent commit
// of the same key that held them is then visible as ours, not as a conflict.
func readCommitState(ctx context.Context, conn *pgx.Conn, req CommitRequest, budget string, now time.Time) (_ *commitState, err error) {
	asked := req.Intent.Resources()
	ids := slices.Clone(asked)
	slices.Sort(ids)
	pool := req.Intent.AgentPool
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(budgetSQL, budget, agencyOf(ctx))
	if pool == "" {
		b.Queue(lockResourcesSQL, ids)
		b.Queue(currentPolicySQL)
		b.Queue(occupancySQL, ids, req.Intent.StartsAt, req.Intent.EndsAt, req.RequestKey)
	} else {
		// The pool's members are locked, and read, with the resources, in
		// the same round trip.
		b.Queue(lockPoolSQL, ids, pool)
		b.Queue(currentPolicySQL)
		b.Queue(occupancyPoolSQL, ids, req.Intent.StartsAt, req.Intent.EndsAt, req.RequestKey, pool)
	}
	b.Queue("SELECT "+refusalColumns+" FROM booking_refusal WHERE request_key = $1", req.RequestKey)
	b.Queue(referenceTakenSQL, req.RequestKey)
	swap := req.Intent.Replaces != ""
	if swap {
		// A reschedule locks the booking it replaces, to check it and (when
		// confirming; a hold releases nothing) release it in this
		// transaction. After the resource locks, as Confirm and Release
		// order theirs.
		b.Queue(`SELECT booking_id, status, coalesce(replaced_by_request_key, ''), property_id, agent_id, starts_at, ends_at FROM booking WHERE request_key = $1 FOR UPDATE`,
			req.Intent.Replaces)
	}
	if pool != "" {
		b.Queue(`SELECT members FROM agent_pool WHERE pool_id = $1`, pool)
		// now is the clock before the locks: a hold that expires while
		// this waits for them still counts, so fairness and limits err on
		// the side of the booking already there.
		b.Queue(liveStartsPoolSQL, ids, req.Intent.StartsAt.Add(-dayWindow), req.Intent.StartsAt.Add(dayWindow), now, pool)
	}
	res := conn.SendBatch(ctx, b)
	defer func() { err = errors.Join(err, res.Close()) }()

	st := &commitState{holding: req.Hold, asked: asked}
	for range 2 { // BEGIN, the budget
		if _, err := res.Exec(); err != nil {
			return nil, err
		}
	}
	if err := st.readResources(res, asked); err != nil {
		return nil, err
	}
	if st.policy, err = scanPolicy(res.QueryRow()); errors.Is(err, pgx.ErrNoRows) {
		st.policy, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := st.readOccupancy(res); err != nil {
		return nil, err
	}
	if err := st.readRefusal(res); err != nil {
		return nil, err
	}
	if err := res.QueryRow().Scan(&st.referenceTaken); err != nil {
		return nil, err
	}
	if swap {
		r := &replacedBooking{}
		switch err := res.QueryRow().Scan(&r.id, &r.status, &r.replacedBy, &r.intent.PropertyID, &r.intent.AgentID,
			&r.intent.StartsAt, &r.intent.EndsAt); {
		case err == nil:
			st.replaced = r
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, err
		}
	}
	if pool == "" {
		return st, nil
	}
	return st, st.readPool(res, pool)
}

// readPool reads the pool's members and their bookings' starts, queued
// after the other reads.
func (st *commitState) readPool(res pgx.BatchResults, pool string) error {
	switch err := res.QueryRow().Scan(&st.members); {
	case errors.Is(err, pgx.ErrNoRows):
		st.poolErr = booking.Rejectf(booking.CodeUnknownPool, "no agent pool %q", pool)
	case err != nil:
		return err
	}
	rows, err := res.Query()
	if err != nil {
		return err
	}
	st.startsRead = true
	return st.collectStarts(rows)
}

// withPool widens a statement's resource list ($1) by the members of the
// pool named by parameter n.
func withPool(sql, target string, n int) string {
	if !strings.Contains(sql, target) {
		panic("withPool: no " + target)
	}
	return strings.Replace(sql, target, strings.Replace(target, "$1", fmt.Sprintf("$1::text[] || coalesce((SELECT members FROM agent_pool WHERE pool_id = $%d), '{}')", n), 1), 1)
}

var (
	lockPoolSQL       = withPool(lockResourcesSQL, "ANY($1)", 2)
	occupancyPoolSQL  = withPool(occupancySQL, "ANY($1)", 5)
	liveStartsPoolSQL = withPool(liveStartsSQL, "unnest($1::text[])", 5)
)

func (st *commitState) readRefusal(res pgx.BatchResults) error {
	r, fp, err := scanRefusal(res.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	st.refusal, st.refusalFingerprint = &r, fp
	return nil
}

// readKeyAlone fills existingFingerprint when no resource exists: the
// occupancy statement then returned no row to carry it, and a reused key
// must be reported as such rather than as unknown resources.
// referenceTakenSQL: does another request's key share this key's spoken
// reference? Both reference indexes answer it.
const referenceTakenSQL = `
SELECT EXISTS (SELECT FROM booking WHERE reference = request_reference($1)
                   AND request_key NOT LIKE 'anon-%' AND request_key <> $1)
    OR EXISTS (SELECT FROM booking_refusal WHERE reference = request_reference($1) AND request_key <> $1)`

func (st *commitState) readKeyAlone(ctx context.Context, conn *pgx.Conn, key string) error {
	if len(st.resources) > 0 {
		return nil
	}
	err := conn.QueryRow(ctx, "SELECT intent_fingerprint FROM booking WHERE request_key = $1", key).
		Scan(&st.existingFingerprint)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

func (st *commitState) readResources(res pgx.BatchResults, ids []string) error {
	rows, err := res.Query()
	if err != nil {
		return err
	}
	st.resources, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*lockedResource, error) {
		r := &lockedResource{}
		var setting string
		return r, row.Scan(&r.ID, &r.Kind, &r.Capacity, &r.TimeZone, &r.rules, &setting)
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if st.resource(id) == nil {
			st.missing = append(st.missing, id)
		}
	}
	return nil
}

func (st *commitState) readOccupancy(res pgx.BatchResults) error {
	rows, err := res.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var occ booking.Span
		var from, to *time.Time
		var o occupant
		var bookingID *uuid.UUID
		var status *string
		if err := rows.Scan(&id, &occ.Start, &occ.End, &from, &to, &bookingID, &status, &o.holdExpires,
			&st.existingFingerprint); err != nil {
			return err
		}
		r := st.resource(id)
		if r == nil {
			continue
		}
		r.occupied = booking.Span{Start: occ.Start.UTC(), End: occ.End.UTC()}
		if bookingID != nil {
			o.Span, o.bookingID, o.status = booking.Span{Start: from.UTC(), End: to.UTC()}, *bookingID, booking.Status(*status)
			r.others = append(r.others, o)
		}
	}
	return rows.Err()
}

// ruled is the locked resources as the time rules see them.
func (st *commitState) ruled(propertyID string) ([]ruled, error) {
	out := make([]ruled, 0, len(st.resources))
	for _, r := range st.resources {
		loc, err := localtime.LoadZone(r.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", r.ID, err)
		}
		out = append(out, ruled{id: r.ID, loc: loc, rules: r.rules, window: r.ID == propertyID, starts: r.starts})
	}
	return out, nil
}

// limited reports whether a locked resource has a daily or weekly limit,
// or the commit chooses from a pool (by bookings that day).
func (st *commitState) limited() bool {
	if len(st.members) > 0 {
		return true
	}
	for _, r := range st.resources {
		if r.rules != nil && (r.rules.DailyLimit > 0 || r.rules.WeeklyLimit > 0) {
			return true
		}
	}
	return false
}

// liveStartsSQL lists the starts of the live bookings (not holds past
// their expiry) on each resource over a window: what its limits count.
const liveStartsSQL = `
SELECT r.id, b.starts_at, b.booking_id, b.created_at
FROM unnest($1::text[]) AS r(id)
CROSS JOIN LATERAL live_occupancy(r.id, tstzrange($2, $3)) lo
JOIN booking b ON b.booking_id = lo.booking_id
WHERE NOT (b.status = 'held' AND b.hold_expires_at <= $4)`

// How far either side of the slot the starts are read: its local day
// (and two hours more for the zone), or, for a weekly limit, its ISO week
// (within 7 days either side, and a day more for the zone).
const (
	dayWindow  = 26 * time.Hour
	weekWindow = 8 * 24 * time.Hour
)

// readStarts reads, under the locks, the live bookings' starts near the
// slot for resources with limits: one more round trip, for them only (a
// pool's are read in the first). The booking a reschedule releases in
// this commit does not count.
func (st *commitState) readStarts(ctx context.Context, conn *pgx.Conn, start, now time.Time) error {
	weekly := st.weekly()
	if !st.limited() || st.startsRead && !weekly {
		return nil
	}
	window := dayWindow
	if weekly {
		window = weekWindow
	}
	var ids []string
	for _, r := range st.resources {
		ids = append(ids, r.ID)
		r.starts, r.created = nil, nil // a pool's day is read again, as part of the week
	}
	rows, err := conn.Query(ctx, liveStartsSQL, ids, start.Add(-window), start.Add(window), now)
	if err != nil {
		return err
	}
	return st.collectStarts(rows)
}

// weekly reports whether a locked resource has a weekly limit.
func (st *commitState) weekly() bool {
	for _, r := range st.resources {
		if r.rules != nil && r.rules.WeeklyLimit > 0 {
			return true
		}
	}
	return false
}

func (st *commitState) collectStarts(rows pgx.Rows) error {
	var id string
	var at, created time.Time
	var bookingID uuid.UUID
	_, err := pgx.ForEachRow(rows, []any{&id, &at, &bookingID, &created}, func() error {
		if r := st.resource(id); r != nil && (st.replaced == nil || st.holding || bookingID != st.replaced.id) {
			r.starts, r.created = append(r.starts, at), append(r.created, created)
		}
		return nil
	})
	return err
}

func (st *commitState) resource(id string) *lockedResource {
	for _, r := range st.resources {
		if r.ID == id {
			return r
		}
	}
	return nil
}
