package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// vancouver adds a property and two agents in America/Vancouver, which
// tzdata 2026a put on year-round UTC−7 from November 2026: 10:00 on
// 8 December 2026 was 18:00Z by 2025b's rules and is 17:00Z by today's.
func (f *fixture) vancouver(t *testing.T) {
	t.Helper()
	for _, r := range []booking.Resource{
		{ID: "van", Kind: "property", Capacity: 1, TimeZone: "America/Vancouver"},
		{ID: "van-agent-1", Kind: "agent", Capacity: 1, TimeZone: "America/Vancouver"},
		{ID: "van-agent-2", Kind: "agent", Capacity: 1, TimeZone: "America/Vancouver"},
	} {
		require.NoError(t, f.store.UpsertResource(f.ctx, r))
	}
}

func vanIntent(agent string, start time.Time) booking.Intent {
	return booking.Intent{PropertyID: "van", AgentID: agent, StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "America/Vancouver"}
}

var (
	underOldRules = time.Date(2026, 12, 8, 18, 0, 0, 0, time.UTC)
	underNewRules = time.Date(2026, 12, 8, 17, 0, 0, 0, time.UTC)
)

// promisedUnder makes key's booking look as a build with older zone rules
// wrote it: the local start it told the caller, resolved by those rules
// to the instant it holds.
func (f *fixture) promisedUnder(t *testing.T, key, local, rules string) {
	t.Helper()
	tag, err := f.pool.Exec(f.ctx, `UPDATE booking SET local_start = $2, zone_rules = $3, zone_rules_checked = $3 WHERE request_key = $1`,
		key, local, rules)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
}

func TestABookingRecordsWhatItPromised(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	f.booked(t, "plain", vanIntent("van-agent-1", underNewRules))
	f.held(t, "held", intent("paris", agent(1), "10:00", "10:30"))
	for key, local := range map[string]string{"plain": "2026-12-08T10:00", "held": "2026-12-08T10:00"} {
		b, err := f.store.Lookup(f.ctx, key)
		require.NoError(t, err)
		require.Equal(t, local, b.LocalStart, key)
		require.Equal(t, localtime.Version(), b.ZoneRules, key)
	}
}

func TestABookingFollowsAChangeOfItsZonesRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	f.booked(t, "told-ten", vanIntent("van-agent-1", underOldRules))
	f.promisedUnder(t, "told-ten", "2026-12-08T10:00", "2025b")

	// A booking a later release resolved is an older build's to leave.
	f.booked(t, "newer-rules", vanIntent("van-agent-2", underNewRules.Add(3*time.Hour)))
	f.promisedUnder(t, "newer-rules", "2026-12-08T14:00", "2999a")
	behind, err := f.store.ZoneRulesBehind(f.ctx)
	require.NoError(t, err)
	require.True(t, behind)

	rep, err := f.store.FollowZoneRules(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Checked)
	require.Equal(t, 1, rep.Moved, rep.Details)
	require.Zero(t, rep.Flagged)
	b, err := f.store.Lookup(f.ctx, "told-ten")
	require.NoError(t, err)
	require.True(t, b.Intent.StartsAt.Equal(underNewRules), "starts %v", b.Intent.StartsAt)
	require.True(t, b.Intent.EndsAt.Equal(underNewRules.Add(30*time.Minute)))
	require.Equal(t, "2026-12-08T10:00", b.LocalStart, "the local time the caller was told stays")
	require.Equal(t, localtime.Version(), b.ZoneRules)
	events, err := f.store.Events(f.ctx, "told-ten")
	require.NoError(t, err)
	require.Equal(t, "time_changed", events[len(events)-1].Kind)
	require.Contains(t, events[len(events)-1].Detail, `"from": "2026-12-08T18:00:00Z"`)
	require.Contains(t, events[len(events)-1].Detail, `"to": "2026-12-08T17:00:00Z"`)

	// What it occupies moved too: the old instant is free, the new taken.
	f.booked(t, "old-slot", vanIntent("van-agent-2", underOldRules))
	out, err := f.store.Commit(f.ctx, commitReq("new-slot", vanIntent("van-agent-2", underNewRules)))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)

	again, err := f.store.FollowZoneRules(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, booking.ZoneRulesReport{}, again, "a second pass changes nothing")
	behind, err = f.store.ZoneRulesBehind(f.ctx)
	require.NoError(t, err)
	require.False(t, behind)
}

func TestABookingThatCannotFollowIsFlaggedNotMoved(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	f.booked(t, "told-ten", vanIntent("van-agent-1", underOldRules))
	f.promisedUnder(t, "told-ten", "2026-12-08T10:00", "2025b")
	other, err := f.store.Commit(f.ctx, commitReq("at-new-instant", vanIntent("van-agent-2", underNewRules)))
	require.NoError(t, err)
	// A Paris booking whose promised time falls in next spring's DST gap.
	_, err = f.store.Commit(f.ctx, commitReq("in-gap", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	f.promisedUnder(t, "in-gap", "2027-03-28T02:30", "2025b")
	// And one whose promised time falls in next autumn's overlap: it
	// happens twice, and which one the caller meant is theirs to say.
	_, err = f.store.Commit(f.ctx, commitReq("in-overlap", intent("paris", agent(2), "11:00", "11:30")))
	require.NoError(t, err)
	f.promisedUnder(t, "in-overlap", "2027-10-31T02:30", "2025b")

	rep, err := f.store.FollowZoneRules(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Flagged, rep.Details)
	require.Zero(t, rep.Moved)
	b, err := f.store.Lookup(f.ctx, "told-ten")
	require.NoError(t, err)
	require.True(t, b.Intent.StartsAt.Equal(underOldRules), "nothing moves silently")

	flags, err := f.store.OpenFlags(f.ctx)
	require.NoError(t, err)
	details := map[string]string{}
	for _, fl := range flags {
		require.Equal(t, KindZoneRulesChanged, fl.Kind)
		details[fl.RequestKey] = fl.Detail
	}
	require.Contains(t, details["told-ten"], "2026-12-08T18:00:00Z")
	require.Contains(t, details["told-ten"], "2026-12-08T17:00:00Z")
	require.Contains(t, details["told-ten"], other.Booking.BookingID.String(), "what it collides with")
	require.Contains(t, details["in-gap"], "does not exist")
	require.Contains(t, details["in-overlap"], "occurs twice")
	require.Contains(t, details["in-overlap"], "2027-10-31T02:30:00+02:00", "both instants: %s", details["in-overlap"])
	require.Contains(t, details["in-overlap"], "2027-10-31T02:30:00+01:00", "both instants: %s", details["in-overlap"])

	again, err := f.store.FollowZoneRules(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, booking.ZoneRulesReport{}, again, "a second pass changes nothing")
}

// An offer made under other zone rules is refused like a stale policy:
// its instant may no longer read as the local time it was offered at.
func TestAnOfferUnderOtherZoneRulesIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	stale := commitReq("stale", vanIntent("van-agent-1", underOldRules))
	stale.ExpectedZoneRules = "2025b"
	_, err := f.store.Commit(f.ctx, stale)
	requireCode(t, err, booking.CodeZoneRulesChanged)
	b, err := f.store.Decision(f.ctx, "stale")
	require.NoError(t, err)
	require.NotNil(t, b.Refusal, "recorded, as any refusal")

	current := commitReq("current", vanIntent("van-agent-1", underNewRules))
	current.ExpectedZoneRules = localtime.Version()
	_, err = f.store.Commit(f.ctx, current)
	require.NoError(t, err)
}

// FollowZoneRules pages: each pass takes at most limit bookings, and a
// booking checked (moved or flagged) is not taken again, so pass after
// pass reaches every one and then none.
func TestFollowingZoneRulesPagesThroughEveryBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	for i, agent := range []string{"van-agent-1", "van-agent-2"} {
		key := fmt.Sprint("paged-", i)
		f.booked(t, key, vanIntent(agent, underOldRules.Add(time.Duration(2*i)*time.Hour)))
		f.promisedUnder(t, key, fmt.Sprintf("2026-12-08T%02d:00", 10+2*i), "2025b")
	}
	f.booked(t, "paged-gap", intent("paris", agent(1), "10:00", "10:30"))
	f.promisedUnder(t, "paged-gap", "2027-03-28T02:30", "2025b")

	var total booking.ZoneRulesReport
	for range 3 {
		rep, err := f.store.FollowZoneRules(f.ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, rep.Checked, "one a pass: %v", rep.Details)
		total.Moved, total.Flagged = total.Moved+rep.Moved, total.Flagged+rep.Flagged
	}
	require.Equal(t, 2, total.Moved, "the two Vancouver bookings")
	require.Equal(t, 1, total.Flagged, "the one in next spring's gap")
	rep, err := f.store.FollowZoneRules(f.ctx, 1)
	require.NoError(t, err)
	require.Equal(t, booking.ZoneRulesReport{}, rep, "every booking reached")
}

// An API on another release of the zone rules than the worker's (a rolling
// deploy) is refused only where the releases disagree: the local time the
// caller agreed, read under this build's rules, must be the instant the
// API resolved. In Paris both releases agree, and the booking stands; in
// Vancouver they do not, and the caller is asked again.
func TestAZoneRulesSkewRefusesOnlyWhereTheInstantDiffers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver(t)
	paris := commitReq("paris-skew", intent("paris", agent(0), "10:00", "10:30"))
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	paris.ExpectedZoneRules, paris.ExpectedLocalStart = "2025b", paris.Intent.StartsAt.In(loc).Format(localtime.Layout)
	_, err = f.store.Commit(f.ctx, paris)
	require.NoError(t, err, "the same instant under both releases")

	// An API on 2025b resolved 10:00 in Vancouver to 18:00Z; this build's
	// rules read 10:00 as 17:00Z.
	van := commitReq("van-skew", vanIntent("van-agent-1", underOldRules))
	van.ExpectedZoneRules, van.ExpectedLocalStart = "2025b", "2026-12-08T10:00"
	_, err = f.store.Commit(f.ctx, van)
	requireCode(t, err, booking.CodeZoneRulesChanged)
}
