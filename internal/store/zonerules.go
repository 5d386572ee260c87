package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// A booking records the local start it promised and the release of the
// zone rules that resolved it (migration 018). A later release may map
// that local start to another instant: the caller still expects the time
// they were told, while the stored instant, the calendars and the reminder
// now say another. FollowZoneRules finds such bookings and moves each to
// the instant its promise now names, a decision under the resources' locks
// like any commit, or flags it for a human when it cannot follow.

// KindZoneRulesChanged is the flag of a booking that could not follow.
const KindZoneRulesChanged = "zone_rules_changed"

// zoneCandidatesSQL pages the future confirmed bookings that the rules in
// use have not checked yet: a checked booking is skipped by every later
// pass under the same release, so a second pass changes nothing.
// A booking resolved by a later release than ours is left alone: during a
// rolling deploy the older build must not move it back.
const (
	zoneBehind = `status = 'confirmed' AND starts_at > $1 AND local_start IS NOT NULL
AND zone_rules_checked IS DISTINCT FROM $2 AND (zone_rules IS NULL OR zone_rules <= $2)`
	zoneCandidatesSQL = `SELECT ` + bookingColumns + ` FROM booking WHERE ` + zoneBehind + `
ORDER BY starts_at, request_key LIMIT $3`
)

// ZoneRulesBehind reports whether a future booking waits to be checked
// under the zone rules in use: a worker that starts with a new release
// runs reconciliation then rather than at its next interval.
func (s *Store) ZoneRulesBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM booking WHERE `+zoneBehind+`)`, s.now(), localtime.Version()).Scan(&behind)
	if err != nil {
		return false, fmt.Errorf("zone rules behind: %w", err)
	}
	return behind, nil
}

// FollowZoneRules checks up to limit future bookings under the zone rules
// in use (localtime.Version).
func (s *Store) FollowZoneRules(ctx context.Context, limit int) (booking.ZoneRulesReport, error) {
	var rep booking.ZoneRulesReport
	rows, err := s.pool.Query(ctx, zoneCandidatesSQL, s.now(), localtime.Version(), limit)
	if err != nil {
		return rep, fmt.Errorf("follow zone rules: %w", err)
	}
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Booking, error) {
		b, _, err := scanBooking(r)
		return b, err
	})
	if err != nil {
		return rep, fmt.Errorf("follow zone rules: %w", err)
	}
	for _, b := range page {
		if err := s.followZoneRules(ctx, b, &rep); err != nil {
			return rep, fmt.Errorf("follow zone rules %s: %w", b.RequestKey, err)
		}
		rep.Checked++
	}
	return rep, nil
}

func (s *Store) followZoneRules(ctx context.Context, b booking.Booking, rep *booking.ZoneRulesReport) error {
	at, err := localtime.Parse(b.LocalStart, b.Intent.TimeZone)
	var gap *localtime.NonexistentError
	var twice *localtime.AmbiguousError
	switch {
	case errors.As(err, &gap) || errors.As(err, &twice):
		// Never guessed: which of two instants, or none, is the caller's
		// to say.
		return s.flagZone(ctx, b, err.Error(), rep)
	case err != nil:
		return err
	case at.Equal(b.Intent.StartsAt):
		return s.markZoneChecked(ctx, b.BookingID, true)
	}
	res, why, err := s.moveFor(ctx, b, at)
	switch {
	case err != nil:
		return err
	case res == followGone: // cancelled or moved meanwhile: nothing promised now
		return nil
	case res == followRefused:
		return s.flagZone(ctx, b, fmt.Sprintf("%s under %s: %s", at.UTC().Format(time.RFC3339), localtime.Version(), why), rep)
	}
	rep.Moved++
	rep.Details = append(rep.Details, fmt.Sprintf("%s: %s %s moved from %s to %s (zone rules %s to %s)", b.RequestKey, b.LocalStart,
		b.Intent.TimeZone, b.Intent.StartsAt.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339), b.ZoneRules, localtime.Version()))
	return nil
}

// flagZone flags a booking that cannot follow, once per release, with
// what it promised and both instants; the booking stays as stored.
func (s *Store) flagZone(ctx context.Context, b booking.Booking, why string, rep *booking.ZoneRulesReport) error {
	detail := fmt.Sprintf("promised %s %s, stored %s (zone rules %s); now %s", b.LocalStart, b.Intent.TimeZone,
		b.Intent.StartsAt.UTC().Format(time.RFC3339), b.ZoneRules, why)
	created, err := s.FlagDrift(ctx, booking.Flag{RequestKey: b.RequestKey, BookingID: b.BookingID, Kind: KindZoneRulesChanged,
		EventID: localtime.Version(), Detail: detail})
	if err != nil {
		return err
	}
	if created {
		rep.Flagged++
		rep.Details = append(rep.Details, b.RequestKey+": "+detail)
	}
	return s.markZoneChecked(ctx, b.BookingID, false)
}

// markZoneChecked records that the rules in use checked the booking; when
// they agree with its instant, they are also the rules it stands by.
func (s *Store) markZoneChecked(ctx context.Context, id uuid.UUID, agree bool) error {
	return s.retry(ctx, "mark zone rules checked", id.String(), func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE booking SET zone_rules_checked = $2,
    zone_rules = CASE WHEN $3 THEN $2 ELSE zone_rules END WHERE booking_id = $1`, id, localtime.Version(), agree)
		return err
	})
}

type followResult int

const (
	followMoved followResult = iota
	followRefused
	followGone
)

// moveFor moves b to start at at, keeping its length, its resources (the
// agent a pool chose stays) and its key, if the resources are free there
// and the hours and limits allow it: a commit on its own slot, decided
// under the same locks, in which b itself does not count.
func (s *Store) moveFor(ctx context.Context, b booking.Booking, at time.Time) (res followResult, why string, err error) {
	in := b.Intent
	in.StartsAt, in.EndsAt = at, at.Add(b.Intent.EndsAt.Sub(b.Intent.StartsAt))
	in.AgentPool = ""
	// Naming itself as replaced locks the booking after the resources (the
	// order every commit keeps) and leaves it out of the counts.
	in.Replaces = b.RequestKey
	req := CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: b.RequestKey, Intent: in}}
	err = s.retry(ctx, "follow zone rules", b.RequestKey, func(ctx context.Context) error {
		res, why, err = s.moveOnce(ctx, req, b)
		return err
	})
	return res, why, err
}

func (s *Store) moveOnce(ctx context.Context, req CommitRequest, b booking.Booking) (followResult, string, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, "", err
	}
	defer conn.Release()
	budget, err := statementBudget(ctx)
	if err != nil {
		return 0, "", err
	}
	st, err := readCommitState(ctx, conn.Conn(), req, budget, s.now())
	now := s.now()
	if err == nil {
		err = st.readStarts(ctx, conn.Conn(), req.Intent.StartsAt, now)
	}
	if err != nil {
		rollback(conn.Conn())
		return 0, "", err
	}
	if r := st.replaced; r == nil || r.id != b.BookingID || r.status != booking.StatusConfirmed || r.replacedBy != "" {
		rollback(conn.Conn())
		return followGone, "", nil
	}
	if why := st.cannotMove(req, now); why != "" {
		rollback(conn.Conn())
		return followRefused, why, nil
	}
	batch := &pgx.Batch{}
	batch.Queue(budgetSQL, budget, agencyOf(ctx))
	queueMove(batch, b, req.Intent, st)
	batch.Queue("COMMIT")
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		rollback(conn.Conn())
		return 0, "", err
	}
	return followMoved, "", nil
}

// cannotMove says why the booking may not stand at the new instant, or "".
func (st *commitState) cannotMove(req CommitRequest, now time.Time) string {
	in := req.Intent
	switch {
	case st.policy == nil:
		return "no booking policy is in force"
	case len(st.missing) > 0:
		return "unknown resource " + strings.Join(st.missing, ", ")
	case !in.StartsAt.After(now):
		return "that instant has passed"
	}
	rs, err := st.ruled(in.PropertyID)
	if err == nil {
		err = fits(rs, in.StartsAt, in.EndsAt, *st.policy)
	}
	if err != nil {
		return err.Error()
	}
	busy, _ := st.busy(now)
	if len(busy) == 0 {
		return ""
	}
	var taken []string
	for _, b := range busy {
		taken = append(taken, fmt.Sprintf("%s is taken %s to %s by %s", b.ResourceID, b.From.UTC().Format(time.RFC3339),
			b.To.UTC().Format(time.RFC3339), strings.Join(st.occupants(b.ResourceID, st.replaced.id, now), ", ")))
	}
	return strings.Join(taken, "; ")
}

// occupants names the live bookings on a resource that the new span
// overlaps, but for the booking being moved.
func (st *commitState) occupants(resourceID string, self uuid.UUID, now time.Time) []string {
	var out []string
	r := st.resource(resourceID)
	for _, o := range r.others {
		expired := o.status == booking.StatusHeld && o.holdExpires != nil && !o.holdExpires.After(now)
		if o.bookingID != self && !expired {
			out = append(out, "booking "+o.bookingID.String())
		}
	}
	return out
}

// queueMove writes the move: the booking's instants, what it occupies
// (buffers as the resources have them now), and the event, which the
// event log's trigger sends as booking.time_changed.
func queueMove(b *pgx.Batch, bk booking.Booking, in booking.Intent, st *commitState) {
	ids := make([]string, 0, len(st.resources))
	from := make([]time.Time, 0, len(st.resources))
	to := make([]time.Time, 0, len(st.resources))
	for _, r := range st.resources {
		ids, from, to = append(ids, r.ID), append(from, r.occupied.Start), append(to, r.occupied.End)
	}
	b.Queue(`UPDATE booking SET starts_at = $2, ends_at = $3, zone_rules = $4, zone_rules_checked = $4 WHERE booking_id = $1`,
		bk.BookingID, in.StartsAt, in.EndsAt, localtime.Version())
	b.Queue(`UPDATE booking_resource br SET occupied = tstzrange(u.lo, u.hi)
FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) AS u(id, lo, hi)
WHERE br.booking_id = $1 AND br.resource_id = u.id`, bk.BookingID, ids, from, to)
	queueEvent(b, bk.RequestKey, &bk.BookingID, "time_changed", map[string]any{
		"local_start": bk.LocalStart, "time_zone": bk.Intent.TimeZone,
		"from": bk.Intent.StartsAt.UTC(), "to": in.StartsAt.UTC(), "ends_at": in.EndsAt.UTC(),
		"zone_rules_before": bk.ZoneRules, "zone_rules": localtime.Version()})
}

// LatestZoneRules is the zone rules' release of the newest booking
// committed, the workers' release as they last wrote it; "" with none.
func (s *Store) LatestZoneRules(ctx context.Context) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, `SELECT zone_rules FROM booking WHERE zone_rules IS NOT NULL AND committed_at IS NOT NULL
ORDER BY committed_at DESC LIMIT 1`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("latest zone rules: %w", err)
	}
	return v, nil
}
