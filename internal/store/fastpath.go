package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// commitFast tries the common commit in one round trip: a confirmation on
// capacity-1 resources with nothing to expire, no hold and no reschedule.
// The statement checks, in SQL, a subset of what the full path checks in Go
// (policy version, resources and kinds, zone, notice, horizon, bookable
// hours) and divides by zero when any fails; an overlap is refused by the
// exclusion constraint and a known key by the unique index. Resources may
// have rules of their own that judge the slot alone (hours, overrides,
// time off): those are judged here, before the statement, by the rule
// itself (booking.Rules.Open) on the rules last read, and the statement
// checks under its locks that each resource still has those rules in
// that zone. A refusal by the server means "not taken": the statement
// rolled back and the full two-round-trip path decides, precisely and with
// its typed outcome. So the fast path can only confirm what the full path
// would also confirm.
//
// Any other error (a lost connection, a cancelled context) leaves the
// outcome unknown: the statement may still commit. It is returned as
// technical, for the caller to retry with the same key, never followed by
// a decision of the full path that could contradict it.
func (s *Store) commitFast(ctx context.Context, req CommitRequest) (Outcome, bool, error) {
	if req.Hold || req.Intent.Replaces != "" || req.Intent.AgentPool != "" || len(req.CalendarBusy) > 0 || req.CalendarUnchecked ||
		req.RestoreID != uuid.Nil || !zoneRulesAgree(req.CommitRequest) {
		return Outcome{}, false, nil
	}
	hours, ok := localHours(req.Intent)
	if !ok {
		return Outcome{}, false, nil
	}
	ids := req.Intent.Resources()
	slices.Sort(ids)
	rules, zones, ok := s.ruled.judge(ctx, s.pool, ids, req.Intent)
	if !ok {
		return Outcome{}, false, nil
	}
	budget, err := statementBudget(ctx)
	if err != nil {
		return Outcome{}, false, fmt.Errorf("commit %s: %w", req.RequestKey, err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Outcome{}, false, fmt.Errorf("commit %s: %w", req.RequestKey, err)
	}
	defer conn.Release()
	bk := booking.Booking{BookingID: uuid.New(), RequestKey: req.RequestKey, Status: booking.StatusConfirmed, Intent: req.Intent,
		PolicyVersion: req.ExpectedPolicyVersion}
	bk.LocalStart, bk.ZoneRules = promised(req.Intent)
	extras := req.Intent.ExtraResources
	if extras == nil {
		extras = []string{}
	}
	detail, _ := json.Marshal(committedDetail{Intent: req.Intent, Status: bk.Status, PolicyVersion: bk.PolicyVersion})
	// One round trip and one implicit transaction: the extended protocol
	// keeps it open until the batch's Sync, so the budget set first
	// bounds the insert.
	b := &pgx.Batch{}
	b.Queue(budgetSQL, budget, agencyOf(ctx))
	var at time.Time
	b.Queue(fastInsertSQL, bk.BookingID, bk.RequestKey, req.Intent.PropertyID, req.Intent.AgentID, extras,
		req.Intent.StartsAt, req.Intent.EndsAt, req.Intent.TimeZone, req.ExpectedPolicyVersion,
		req.Intent.Fingerprint(), s.now(), ids, detail, req.Contact.SealedBox(), req.Intent.EndsAt.Add(s.cfg.ContactRetention),
		hours.SameDay, hours.Start, hours.End, bk.LocalStart, bk.ZoneRules, rules, zones).QueryRow(func(row pgx.Row) error { return row.Scan(&at, &bk.RemindAt) })
	err = conn.SendBatch(ctx, b).Close()
	var pgErr *pgconn.PgError
	switch {
	case timedOut(err):
		return Outcome{}, false, fmt.Errorf("commit %s: %w", req.RequestKey, ErrTimeout)
	case errors.As(err, &pgErr):
		return Outcome{}, false, nil // refused and rolled back: the full path decides
	case err != nil:
		return Outcome{}, false, fmt.Errorf("commit %s: %w", req.RequestKey, err)
	}
	at = at.UTC().Truncate(time.Microsecond)
	bk.CreatedAt, bk.CommittedAt = at, &at
	if bk.RemindAt != nil {
		*bk.RemindAt = bk.RemindAt.UTC()
	}
	return Outcome{Booking: bk}, true, nil
}

// ruledCache knows, for a few seconds at a time, the rules of the
// resources that have rules of their own, so that the fast path can judge
// them, and send a commit it cannot judge straight to the full path rather
// than through a statement bound to decline. It is only a shortcut: the
// statement checks under its locks that each resource's rules are the
// ones judged, so a stale cache costs a round trip, never a wrong decision.
type ruledCache struct {
	mu sync.Mutex
	// agencies are each agency's ruled resources, by agency_no.
	agencies map[string]ruledSet
}

// ruledSet is one agency's ruled resources, as read at.
type ruledSet struct {
	at  time.Time
	ids map[string]cachedRules
}

// cachedRules are a resource's rules as the table holds them (raw, which
// the statement compares), decoded, and its zone.
type cachedRules struct {
	raw   string
	rules booking.Rules
	zone  string
}

const ruledTTL = 5 * time.Second

// judge says whether the fast path may take a commit on ids (sorted) and,
// if so, the rules and zones it judged each by, in ids' order (nil: no
// rules). Only rules that judge the slot alone qualify; notice, horizon
// and limits of a resource's own, and rules the slot breaks, go to the
// full path, which words the refusal.
func (c *ruledCache) judge(ctx context.Context, pool db, ids []string, in booking.Intent) (rules, zones []*string, ok bool) {
	known := c.load(ctx, pool)
	rules, zones = make([]*string, len(ids)), make([]*string, len(ids))
	for i, id := range ids {
		r, has := known[id]
		if !has {
			continue
		}
		if r.rules.MinNoticeMinutes > 0 || r.rules.HorizonDays > 0 || r.rules.DailyLimit > 0 || r.rules.WeeklyLimit > 0 {
			return nil, nil, false
		}
		loc, err := localtime.LoadZone(r.zone)
		if err != nil {
			return nil, nil, false
		}
		// The policy's window is the statement's to check, for every
		// resource: allowing the whole day here leaves it that.
		if r.rules.Open(in.StartsAt, in.EndsAt, loc, wholeDay, id == in.PropertyID) != nil {
			return nil, nil, false
		}
		rules[i], zones[i] = &r.raw, &r.zone
	}
	return rules, zones, true
}

// wholeDay is a policy window that refuses nothing within one local day.
var wholeDay = booking.Policy{OpensAt: 0, ClosesAt: 24 * time.Hour}

// load returns the cached rules, read again when older than ruledTTL. A
// failed read leaves none known: the statement then asks every resource
// to have no rules, as it would have no rules to judge.
func (c *ruledCache) load(ctx context.Context, pool db) map[string]cachedRules {
	c.mu.Lock()
	defer c.mu.Unlock()
	agency := agencyOf(ctx)
	if set, ok := c.agencies[agency]; ok && time.Since(set.at) <= ruledTTL {
		return set.ids
	}
	rows, err := pool.Query(ctx, `SELECT resource_id, rules::text, time_zone FROM resource WHERE rules IS NOT NULL`)
	if err != nil {
		return nil
	}
	ids := map[string]cachedRules{}
	var id string
	var r cachedRules
	_, err = pgx.ForEachRow(rows, []any{&id, &r.raw, &r.zone}, func() error {
		r.rules = booking.Rules{}
		if err := json.Unmarshal([]byte(r.raw), &r.rules); err != nil {
			return fmt.Errorf("rules of %s: %w", id, err)
		}
		ids[id] = r
		return nil
	})
	if err != nil {
		return nil
	}
	if c.agencies == nil {
		c.agencies = map[string]ruledSet{}
	}
	c.agencies[agency] = ruledSet{at: time.Now(), ids: ids}
	return ids
}

// forget makes the next commits read the resources' rules afresh.
func (c *ruledCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.agencies = nil
}

// localHours is the intent's wall-clock span, judged with Go's zone rules
// as the full path judges it (not PostgreSQL's, whose names and tz
// database may read a zone differently).
func localHours(in booking.Intent) (booking.WallHours, bool) {
	loc, err := localtime.LoadZone(in.TimeZone)
	if err != nil {
		return booking.WallHours{}, false
	}
	return booking.Wall(in.StartsAt, in.EndsAt, loc), true
}

// fastInsertSQL locks the resources in id order (as the full path does),
// then the current policy, so a change to either made while it waits is
// read, not an older snapshot; then it inserts the booking, its
// occupancy, its event and the contact only if every check holds, and
// otherwise divides by zero. "now" is the store's clock (Config.Now)
// moved on by the statement's own wait: a decision made after the locks,
// on the full path's clock. (It took the database's clock when later: a
// pool's round robin then compared one path's bookings by the database's
// clock with the other's by the store's.) It returns that "now".
//
// Every CTE and join here is executor set-up paid on each call, about a
// tenth of the statement's cost, so the clock is read beside the policy
// rather than in a CTE of its own.
const fastInsertSQL = `
WITH locked AS (
    -- judged: the resource's rules (none, or the ones judged in Go, in
    -- the zone they were judged in) are still the ones judged.
    SELECT resource_id, resource_no, kind, capacity, time_zone, buffer_before_minutes, buffer_after_minutes,
           rules IS NOT DISTINCT FROM ($21::text[])[array_position($12::text[], resource_id)]::jsonb
               AND (rules IS NULL OR time_zone = ($22::text[])[array_position($12::text[], resource_id)]) AS judged
    FROM resource WHERE resource_id = ANY($12) ORDER BY resource_id FOR NO KEY UPDATE
), p AS (
    -- Read after the resource locks (the join makes it wait for them) and
    -- locked: a policy made current meanwhile is seen, as the full path,
    -- which reads it after its locks, would see it. One row at most (a
    -- unique index), so the clock is read once.
    SELECT pol.version, extract(epoch FROM pol.opens_at)::int AS opens, extract(epoch FROM pol.closes_at)::int AS closes,
           pol.min_notice_minutes, pol.horizon_days, pol.default_buffer_before_minutes, pol.default_buffer_after_minutes,
           $11::timestamptz + (clock_timestamp() - statement_timestamp()) AS now
    FROM policy pol, (SELECT count(*) FROM locked) AS after_locks
    WHERE pol.is_current FOR KEY SHARE OF pol
), rs AS (
    -- One row per locked resource with the policy beside it: no row at all
    -- when no policy is current.
    SELECT l.resource_id, l.resource_no, l.kind, l.capacity, l.time_zone, l.judged, p.version, p.opens, p.closes, p.min_notice_minutes,
           p.horizon_days, p.now, greatest(l.buffer_before_minutes, p.default_buffer_before_minutes) AS before_minutes,
           greatest(l.buffer_after_minutes, p.default_buffer_after_minutes) AS after_minutes
    FROM locked l, p
), ok AS MATERIALIZED (
    -- One aggregate over rs: every check in a single plan node.
    SELECT 1 / (CASE WHEN
        count(*) = cardinality($12::text[])
        AND bool_and(rs.version = $9 AND rs.capacity = 1 AND rs.judged AND $17::int >= rs.opens AND $18::int <= rs.closes
            AND $6::timestamptz >= rs.now + make_interval(mins => rs.min_notice_minutes)
            -- Whole 24-hour days, as the full path counts them (a calendar
            -- day in the session's zone is 23 or 25 hours across DST).
            AND (rs.horizon_days = 0 OR $6::timestamptz <= rs.now + make_interval(hours => 24 * rs.horizon_days)))
        AND bool_or(rs.resource_id = $3 AND rs.kind = 'property' AND rs.time_zone = $8)
        AND bool_or(rs.resource_id = $4 AND rs.kind = 'agent')
        AND $16::boolean
        -- A key the store refused keeps its refusal: the full path replays it.
        AND NOT EXISTS (SELECT 1 FROM booking_refusal WHERE request_key = $2)
    THEN 1 ELSE 0 END) AS one, max(rs.now) AS now
    FROM rs
), b AS (
    INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, extra_resource_ids,
        starts_at, ends_at, time_zone, policy_version, intent_fingerprint, committed_at, created_at,
        local_start, zone_rules, zone_rules_checked)
    SELECT $1, $2, 'confirmed', $3, $4, $5, $6, $7, $8, $9, $10, ok.now, ok.now, $19, $20, $20 FROM ok
    WHERE ok.one = 1 -- uses the guard's value, so it is always computed
    RETURNING booking_id, remind_at
), r AS (
    INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
    SELECT b.booking_id, rs.resource_id, rs.resource_no,
           tstzrange($6::timestamptz - make_interval(mins => rs.before_minutes), $7::timestamptz + make_interval(mins => rs.after_minutes)),
           true, true
    FROM b, rs
), c AS (
    INSERT INTO booking_contact (booking_id, sealed, retain_until)
    SELECT b.booking_id, $14, $15 FROM b WHERE $14::bytea IS NOT NULL
)
INSERT INTO booking_event (request_key, booking_id, kind, detail)
SELECT $2, b.booking_id, 'committed', $13 FROM b
RETURNING (SELECT now FROM ok), (SELECT remind_at FROM b)`
