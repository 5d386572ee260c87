package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// CommitRequest is the booking request and what the calendars said of its
// slot just before.
type CommitRequest struct {
	booking.CommitRequest
	// CalendarBusy is what the resources' calendars showed busy when read
	// just before the commit: events written past the service. The store
	// decides with it, under its locks, and records the conflict.
	CalendarBusy []booking.Busy
	// CalendarUnchecked says the calendars could not be read in time: the
	// store decides alone and flags the booking for reconciliation.
	CalendarUnchecked bool
	// RestoreID, when set, is the booking id a restore brings back (a
	// booking the store lost, as its saga knew it): the commit is decided
	// as any other, and a booking it makes keeps that id, which its
	// calendar events carry.
	RestoreID uuid.UUID
	// HoldUntil, when set, is when a restored hold ends at the latest:
	// the hold it was, whatever time the commit took to reach the store.
	HoldUntil time.Time
}

// Outcome is what the store decided. Exactly one of Conflict and Booking is
// meaningful: a nil Conflict means Booking holds the booking for the key.
type Outcome struct {
	Booking  booking.Booking `json:"booking"`
	Conflict *Conflict       `json:"conflict,omitempty"`
	// Replayed means the key was already committed with this intent; the
	// original booking is returned and nothing was written.
	Replayed bool `json:"replayed,omitempty"`
}

// Conflict names each resource that is full during the requested time.
type Conflict struct {
	Busy []booking.Busy `json:"busy"`
}

// Commit books req.Intent under req.RequestKey, or returns what the key
// already booked. Business refusals are *booking.Rejection errors; other
// errors are technical and safe to retry with the same key.
//
// The plain case (a confirmation on capacity-1 resources) first tries one
// statement and one round trip (commitFast); whatever it declines, the
// full path below decides, in two round trips, with its typed outcome.
func (s *Store) Commit(ctx context.Context, req CommitRequest) (Outcome, error) {
	req.Intent = req.Intent.Normalize()
	if err := validateCommit(req); err != nil {
		return Outcome{}, fmt.Errorf("commit %s: %w", req.RequestKey, err)
	}
	if req.Contact.HasPlain() {
		// A saga of the release before carries its contact in plain
		// text; the store keeps none.
		sealed, err := s.SealContact(ctx, req.RequestKey, *req.Contact, req.Intent.TimeZone)
		if err != nil {
			return Outcome{}, err
		}
		req.Contact = sealed
	}
	if out, ok, err := s.commitFast(ctx, req); ok || err != nil {
		return out, err
	}
	var out Outcome
	err := s.retry(ctx, "commit", req.RequestKey, func(ctx context.Context) error {
		var err error
		out, err = s.commitOnce(ctx, req)
		return err
	})
	return out, err
}

func validateCommit(req CommitRequest) error {
	if err := booking.ValidateKey(req.RequestKey); err != nil {
		return err
	}
	if err := req.Intent.Validate(); err != nil {
		return err
	}
	if req.ExpectedPolicyVersion == "" {
		return booking.Rejectf(booking.CodeMissingField, "expected_policy_version is required")
	}
	return booking.ValidateReplacement(req.RequestKey, req.Intent.Replaces)
}

// commitOnce is one attempt. It pipelines its statements in two round trips:
// BEGIN, lock, read; then write and COMMIT. The read runs after the lock in
// the same pipeline, so under READ COMMITTED its snapshot already includes
// every booking committed by whoever held the lock before us.
func (s *Store) commitOnce(ctx context.Context, req CommitRequest) (Outcome, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer conn.Release()
	budget, err := statementBudget(ctx)
	if err != nil {
		return Outcome{}, err
	}
	st, err := readCommitState(ctx, conn.Conn(), req, budget, s.now())
	if err == nil {
		err = st.readKeyAlone(ctx, conn.Conn(), req.RequestKey)
	}
	if err != nil {
		rollback(conn.Conn())
		return Outcome{}, err
	}
	// The clock is read after the locks: a commit that waited for them
	// decides notice and hold expiry as of now, not as of its arrival.
	now := s.now()
	if st.existingFingerprint == nil && st.refusal == nil {
		if err := st.readStarts(ctx, conn.Conn(), req.Intent.StartsAt, now); err != nil {
			rollback(conn.Conn())
			return Outcome{}, err
		}
	}
	switch {
	case st.existingFingerprint != nil:
		rollback(conn.Conn())
		return s.replay(ctx, req, st.existingFingerprint)
	case st.refusal != nil:
		rollback(conn.Conn())
		return replayRefusal(*st.refusal, st.refusalFingerprint, req)
	}
	b := &pgx.Batch{}
	// What is left of the budget now bounds the writes and the COMMIT.
	if budget, err = statementBudget(ctx); err != nil {
		rollback(conn.Conn())
		return Outcome{}, err
	}
	b.Queue(budgetSQL, budget, agencyOf(ctx))
	out, err := s.decide(b, req, st, now)
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn.Conn())
		return Outcome{}, err
	}
	if st.remindAt != nil {
		at := st.remindAt.UTC()
		out.Booking.RemindAt = &at // the store's trigger works it out (migration 027)
	}
	return out, err
}

// decide queues the decision on a key the store has not decided yet: a
// refusal (recorded, and returned as the error), a conflict (recorded), or
// the booking.
func (s *Store) decide(b *pgx.Batch, req CommitRequest, st *commitState, now time.Time) (Outcome, error) {
	refuse := booking.Refusal{RequestKey: req.RequestKey, Intent: req.Intent, PolicyVersion: req.ExpectedPolicyVersion, DecidedAt: now}
	// The key stands for the intent asked for: a pool, not the agent the
	// commit chooses, so a retry of it replays that agent.
	fp := req.Intent.Fingerprint()
	var poolBusy []booking.Busy
	var err error
	switch {
	case st.referenceTaken:
		err = booking.Rejectf(booking.CodeReferenceCollision,
			"this request_key's spoken reference already names another request; make a new request_key and book again")
	case req.Intent.AgentPool != "":
		req, st, poolBusy, err = st.choose(req, now)
	default:
		err = st.check(req, now)
	}
	if err != nil {
		var rej *booking.Rejection
		if !errors.As(err, &rej) {
			return Outcome{}, err
		}
		refuse.Outcome, refuse.Code, refuse.Message = booking.RefusedRejected, rej.Code, rej.Message
		queueRefusal(b, refuse, fp)
		return Outcome{}, err
	}
	busy, stale := st.busy(now)
	if poolBusy != nil {
		busy = poolBusy
	}
	if len(stale) > 0 {
		queueExpire(b, stale, now)
	}
	if len(req.CalendarBusy) > 0 {
		busy = req.CalendarBusy // the calendar's word comes first: it names the foreign event
	}
	if len(busy) > 0 {
		refuse.Outcome, refuse.Code, refuse.Message, refuse.Busy = booking.RefusedConflict, booking.CodeSlotTaken, "the slot is no longer free", busy
		queueRefusal(b, refuse, fp)
		return Outcome{Conflict: &Conflict{Busy: busy}}, nil
	}
	if st.replaced != nil && !req.Hold {
		// Released before the insert: the exclusion constraint would
		// otherwise see the old and the new booking overlap.
		queueReleaseReplaced(b, st.replaced.id, req, now)
	}
	out := Outcome{Booking: s.queueInsert(b, req, st, now, fp)}
	if req.CalendarUnchecked {
		queueEvent(b, req.RequestKey, &out.Booking.BookingID, "calendar_unchecked", nil)
	}
	return out, nil
}

// rollback ends a failed transaction. It runs even when ctx is done; if it
// cannot, the pool discards the connection rather than reuse it mid-transaction.
func rollback(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
}

// replay answers a key that is already booked: with the booking as it is
// now if the intent matches, with a refusal if the key is being reused.
func (s *Store) replay(ctx context.Context, req CommitRequest, fingerprint []byte) (Outcome, error) {
	if !slices.Equal(fingerprint, req.Intent.Fingerprint()) {
		return Outcome{}, reused(req.RequestKey)
	}
	existing, err := s.Lookup(ctx, req.RequestKey)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Booking: existing, Replayed: true}, nil
}

func (s *Store) queueInsert(b *pgx.Batch, req CommitRequest, st *commitState, now time.Time, fp []byte) booking.Booking {
	bk := booking.Booking{
		BookingID:     cmp.Or(req.RestoreID, uuid.New()),
		RequestKey:    req.RequestKey,
		Status:        booking.StatusConfirmed,
		Intent:        req.Intent,
		PolicyVersion: st.policy.Version,
		CreatedAt:     now,
	}
	bk.LocalStart, bk.ZoneRules = promised(req.Intent)
	if req.Hold {
		bk.Status = booking.StatusHeld
		ttl := st.policy.HoldTTL
		if req.HoldTTL > 0 && req.HoldTTL < ttl {
			ttl = req.HoldTTL
		}
		exp := now.Add(ttl)
		if !req.HoldUntil.IsZero() && req.HoldUntil.Before(exp) {
			exp = req.HoldUntil
		}
		bk.HoldExpiresAt = &exp
	} else {
		bk.CommittedAt = &now
	}
	ids := make([]string, 0, len(st.resources))
	from := make([]time.Time, 0, len(st.resources))
	to := make([]time.Time, 0, len(st.resources))
	exclusive := make([]bool, 0, len(st.resources))
	for _, r := range st.resources {
		ids = append(ids, r.ID)
		from = append(from, r.occupied.Start)
		to = append(to, r.occupied.End)
		exclusive = append(exclusive, r.Capacity == 1)
	}
	detail, _ := json.Marshal(committedDetail{Intent: req.Intent, Status: bk.Status, PolicyVersion: bk.PolicyVersion})
	extras := req.Intent.ExtraResources
	if extras == nil {
		extras = []string{}
	}
	b.Queue(insertBookingSQL, bk.BookingID, bk.RequestKey, bk.Status, req.Intent.PropertyID, req.Intent.AgentID,
		extras, req.Intent.StartsAt, req.Intent.EndsAt, req.Intent.TimeZone, st.policy.Version,
		fp, bk.HoldExpiresAt, nullable(req.Intent.Replaces), bk.CommittedAt, now,
		ids, from, to, exclusive, detail, nullable(req.Intent.AgentPool), nullable(bk.LocalStart), bk.ZoneRules).
		QueryRow(func(row pgx.Row) error { return row.Scan(&st.remindAt) })
	if box := req.Contact.SealedBox(); box != nil {
		b.Queue(`INSERT INTO booking_contact (booking_id, sealed, retain_until) VALUES ($1, $2, $3)`,
			bk.BookingID, box, req.Intent.EndsAt.Add(s.cfg.ContactRetention))
	}
	return bk
}

// insertBookingSQL writes the booking, what it occupies, and its event in
// one statement.
const insertBookingSQL = `
WITH b AS (
    INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, extra_resource_ids,
        starts_at, ends_at, time_zone, policy_version, intent_fingerprint, hold_expires_at,
        replaces_request_key, committed_at, created_at, agent_pool_id, local_start, zone_rules, zone_rules_checked)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $21, $22, $23, $23)
    RETURNING booking_id, remind_at
), r AS (
    INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
    SELECT b.booking_id, u.id, res.resource_no, tstzrange(u.lo, u.hi), true, u.excl
    FROM b, unnest($16::text[], $17::timestamptz[], $18::timestamptz[], $19::boolean[]) AS u(id, lo, hi, excl)
    -- LEFT: a resource gone missing fails loudly on NOT NULL, not by a
    -- silently shorter occupancy (the full path has checked them all).
    LEFT JOIN resource res ON res.resource_id = u.id
)
INSERT INTO booking_event (request_key, booking_id, kind, detail)
SELECT $2, b.booking_id, 'committed', $20 FROM b
RETURNING (SELECT remind_at FROM b)`

// queueReleaseReplaced releases a rescheduled booking in the commit of its
// replacement.
func queueReleaseReplaced(b *pgx.Batch, id uuid.UUID, req CommitRequest, now time.Time) {
	b.Queue(`UPDATE booking SET status = 'released_for_reschedule', released_at = $2, replaced_by_request_key = $3 WHERE booking_id = $1`,
		id, now, req.RequestKey)
	b.Queue(`UPDATE booking_resource SET live = false WHERE booking_id = $1`, id)
	queueEvent(b, req.Intent.Replaces, &id, string(booking.StatusReleasedForReschedule), map[string]any{"replaced_by": req.RequestKey})
}

// committedDetail is what a "committed" event records: the intent and the
// decision. A struct, not a map: it is marshalled on every commit.
type committedDetail struct {
	Intent        booking.Intent `json:"intent"`
	PolicyVersion string         `json:"policy_version"`
	Status        booking.Status `json:"status"`
}

func queueEvent(b *pgx.Batch, key string, bookingID *uuid.UUID, kind string, detail any) {
	raw := []byte("{}")
	if detail != nil {
		raw, _ = json.Marshal(detail)
	}
	b.Queue(`INSERT INTO booking_event (request_key, booking_id, kind, detail) VALUES ($1, $2, $3, $4)`,
		key, bookingID, kind, raw)
}

// promised is what a booking tells its caller: its start as wall time in
// its zone, and the release of the zone rules that says so. Validate has
// already loaded the zone.
func promised(in booking.Intent) (local, rules string) {
	loc, err := localtime.LoadZone(in.TimeZone)
	if err != nil {
		return "", ""
	}
	return in.StartsAt.In(loc).Format(localtime.Layout), localtime.Version()
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
