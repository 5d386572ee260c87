package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// TestFastPathConfirmsOnlyWhatTheFullPathWould checks the one-round-trip
// commit against the full path: it takes the plain case, and declines
// (writing nothing) every case the full path refuses or must decide itself.
func TestFastPathConfirmsOnlyWhatTheFullPathWould(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out, ok, err := f.store.commitFast(f.ctx, commitReq("fast-1", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	require.True(t, ok, "the plain case takes the fast path")
	got, err := f.store.Lookup(f.ctx, "fast-1")
	require.NoError(t, err)
	require.False(t, got.CreatedAt.IsZero(), "the store stamps the commit")
	require.Equal(t, out.Booking.CreatedAt, got.CreatedAt, "the times it reports are the ones it wrote")
	require.Equal(t, out.Booking.BookingID, got.BookingID)
	require.Equal(t, testPolicy.Version, got.PolicyVersion)
	require.Equal(t, out.Booking.Intent.Normalize(), got.Intent)
	events, err := f.store.Events(f.ctx, "fast-1")
	require.NoError(t, err)
	require.Equal(t, "committed", events[0].Kind)

	before := f.count(t)
	nyc := intent("ny", agent(1), "10:00", "10:30")
	nyc.TimeZone = "America/New_York"
	utc := intent("paris", agent(7), "12:00", "12:30")
	utc.TimeZone = "UTC"
	cases := map[string]CommitRequest{
		"same key again":        commitReq("fast-1", intent("paris", agent(0), "10:00", "10:30")),
		"overlap":               commitReq("fast-2", intent("paris", agent(1), "10:15", "10:45")),
		"buffer-free but agent": commitReq("fast-3", intent("duo", agent(0), "10:00", "10:30")),
		"capacity 2":            commitReq("fast-4", intent("duo", agent(2), "12:00", "12:30")),
		"policy changed": func() CommitRequest {
			r := commitReq("fast-5", intent("paris", agent(3), "12:00", "12:30"))
			r.ExpectedPolicyVersion = "old"
			return r
		}(),
		"outside hours":     commitReq("fast-6", intent("paris", agent(4), "07:00", "07:30")),
		"past closing":      commitReq("fast-7", intent("paris", agent(5), "19:45", "20:15")),
		"wrong kind":        commitReq("fast-8", intent("paris", "keys", "12:00", "12:30")),
		"agent as property": commitReq("fast-14", intent(agent(10), agent(11), "12:00", "12:30")),
		"unknown":           commitReq("fast-9", intent("atlantis", agent(6), "12:00", "12:30")),
		"zone mismatch":     commitReq("fast-10", utc),
		"other property":    commitReq("fast-11", nyc),
		"hold": func() CommitRequest {
			r := commitReq("fast-12", intent("paris", agent(8), "14:00", "14:30"))
			r.Hold = true
			return r
		}(),
	}
	for name, req := range cases {
		_, ok, err := f.store.commitFast(f.ctx, req)
		require.NoError(t, err, name)
		require.False(t, ok, name)
	}
	require.Equal(t, before, f.count(t), "declining writes nothing")

	f.clock.Advance(25*time.Hour + 45*time.Minute) // 2026-12-08 07:45Z, 08:45 in Paris
	_, ok, err = f.store.commitFast(f.ctx, commitReq("fast-15", intent("paris", agent(12), "09:00", "09:30")))
	require.NoError(t, err)
	require.False(t, ok, "15 minutes' notice, the policy asks for an hour")
	_, err = f.store.Commit(f.ctx, commitReq("fast-15", intent("paris", agent(12), "09:00", "09:30")))
	requireCode(t, err, booking.CodeTooShortNotice)

	f.clock.Advance(31*time.Hour + 15*time.Minute) // 2026-12-09 15:00Z: the 10:00 slot has passed
	_, ok, err = f.store.commitFast(f.ctx, commitReq("fast-13", intent("paris", agent(9), "11:00", "11:30")))
	require.NoError(t, err)
	require.False(t, ok, "in the past")

	_, err = f.pool.Exec(f.ctx, "UPDATE policy SET is_current = false")
	require.NoError(t, err)
	_, ok, err = f.store.commitFast(f.ctx, commitReq("fast-16", intent("paris", agent(13), "17:00", "17:30")))
	require.NoError(t, err)
	require.False(t, ok, "no policy in force")
	_, err = f.store.Commit(f.ctx, commitReq("fast-16", intent("paris", agent(13), "17:00", "17:30")))
	requireCode(t, err, booking.CodeNoCurrentPolicy)
	after := f.count(t)
	require.Equal(t, before["booking"], after["booking"], "declining books nothing")
	require.Equal(t, before["booking_event"]+2, after["booking_event"], "the full path's two refusals are recorded decisions")
}

// PostgreSQL reads "CET" as a fixed +01:00 abbreviation, Go as the zone with
// summer time: bookable hours must be judged the way the full path does.
func TestFastPathJudgesHoursWithGoZoneRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "cet", Kind: "property", Capacity: 1, TimeZone: "CET"}))
	f.clock.Advance(-200 * 24 * time.Hour) // before the summer test date
	// 18:15Z in July is 20:15 CEST: after the 20:00 closing.
	summer := time.Date(2026, 7, 14, 18, 15, 0, 0, time.UTC)
	in := intent("cet", agent(0), "10:00", "10:30")
	in.StartsAt, in.EndsAt, in.TimeZone = summer, summer.Add(30*time.Minute), "CET"
	_, ok, err := f.store.commitFast(f.ctx, commitReq("cet-1", in))
	require.NoError(t, err)
	require.False(t, ok, "the fast path declines")
	_, err = f.store.Commit(f.ctx, commitReq("cet-1", in))
	requireCode(t, err, booking.CodeOutsideBookableHours)
}

// Rules that judge the slot alone (hours, overrides, time off) no longer
// send a commit to the full path: the fast path judges them by the rule
// itself and takes what they allow. Whatever they refuse, and rules that
// count or look at the clock (limits, a resource's own notice or horizon),
// it declines, writing nothing, for the full path to decide.
func TestFastPathJudgesRulesThatJudgeTheSlotAlone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	morning := booking.Rules{Hours: everyDay("09:00", "12:00"),
		Overrides: []booking.DateHours{{Date: "2026-12-09", Closed: true}},
		TimeOff:   []booking.Span{{Start: paris("11:00"), End: paris("11:30")}}}
	withLimit := booking.Rules{Hours: everyDay("09:00", "12:00"), DailyLimit: 5}
	withNotice := booking.Rules{Hours: everyDay("09:00", "12:00"), MinNoticeMinutes: 30}
	for _, r := range []booking.Resource{
		{ID: "ruled-prop", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", Rules: &morning},
		{ID: "ruled-agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", Rules: &morning},
		{ID: "limited-agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", Rules: &withLimit},
		{ID: "notice-agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", Rules: &withNotice},
	} {
		require.NoError(t, f.store.UpsertResource(f.ctx, r))
	}

	out, ok, err := f.store.commitFast(f.ctx, commitReq("ruled-1", intent("ruled-prop", "ruled-agent", "09:00", "09:30")))
	require.NoError(t, err)
	require.True(t, ok, "within both resources' hours: the fast path takes it")
	got, err := f.store.Lookup(f.ctx, "ruled-1")
	require.NoError(t, err)
	require.Equal(t, out.Booking.BookingID, got.BookingID)

	tomorrow := intent("ruled-prop", "ruled-agent", "10:00", "10:30")
	tomorrow.StartsAt, tomorrow.EndsAt = tomorrow.StartsAt.AddDate(0, 0, 1), tomorrow.EndsAt.AddDate(0, 0, 1)
	before := f.count(t)
	declined := map[string]struct {
		req  CommitRequest
		code booking.Code // the full path's refusal; "" is a booking
	}{
		"after the resources' hours, in the policy's": {commitReq("ruled-2", intent("ruled-prop", "ruled-agent", "14:00", "14:30")), booking.CodeOutsideHours},
		"in the time off":        {commitReq("ruled-3", intent("ruled-prop", "ruled-agent", "11:15", "11:45")), booking.CodeTimeOff},
		"on the closed date":     {commitReq("ruled-4", tomorrow), booking.CodeOutsideHours},
		"an agent with a limit":  {commitReq("ruled-5", intent("paris", "limited-agent", "10:00", "10:30")), ""},
		"an agent with a notice": {commitReq("ruled-6", intent("paris", "notice-agent", "10:30", "11:00")), ""},
	}
	for name, c := range declined {
		_, ok, err := f.store.commitFast(f.ctx, c.req)
		require.NoError(t, err, name)
		require.False(t, ok, name)
	}
	require.Equal(t, before, f.count(t), "declining writes nothing")
	for name, c := range declined {
		out, err := f.store.Commit(f.ctx, c.req)
		if c.code != "" {
			requireCode(t, err, c.code)
			continue
		}
		require.NoError(t, err, name)
		require.NotNil(t, out.Booking.CommittedAt, name)
	}
}

// The fast path judges by the rules it read last; the statement confirms
// only if the resource still has them, under its lock. Rules changed
// behind the cache (another process, or SQL) make it decline.
func TestFastPathDeclinesRulesChangedSinceItReadThem(t *testing.T) {
	t.Parallel()
	f := setup(t)
	wide := booking.Rules{Hours: everyDay("09:00", "18:00")}
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "moving-prop", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", Rules: &wide}))
	_, ok, err := f.store.commitFast(f.ctx, commitReq("moving-1", intent("moving-prop", agent(0), "09:00", "09:30")))
	require.NoError(t, err)
	require.True(t, ok, "the cache now holds 09:00-18:00")

	_, err = f.pool.Exec(f.ctx, `UPDATE resource SET rules = $1 WHERE resource_id = 'moving-prop'`, mustJSON(t, booking.Rules{Hours: everyDay("09:00", "10:00")}))
	require.NoError(t, err)
	before := f.count(t)
	late := commitReq("moving-2", intent("moving-prop", agent(1), "15:00", "15:30"))
	_, ok, err = f.store.commitFast(f.ctx, late)
	require.NoError(t, err)
	require.False(t, ok, "15:00 passes the cached rules, not the resource's own")
	require.Equal(t, before, f.count(t))
	_, err = f.store.Commit(f.ctx, late)
	requireCode(t, err, booking.CodeOutsideHours)

	// An agent's hours in its own zone: London's 09:00-18:00 is Paris's
	// 10:00-19:00.
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "moving-agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/London", Rules: &wide}))
	_, ok, err = f.store.commitFast(f.ctx, commitReq("moving-3", intent("paris", "moving-agent", "10:00", "10:30")))
	require.NoError(t, err)
	require.True(t, ok, "the cache now holds the agent in London")
	_, err = f.pool.Exec(f.ctx, `UPDATE resource SET time_zone = 'Europe/Paris' WHERE resource_id = 'moving-agent'`)
	require.NoError(t, err)
	evening := commitReq("moving-4", intent("paris", "moving-agent", "18:30", "19:00"))
	_, ok, err = f.store.commitFast(f.ctx, evening)
	require.NoError(t, err)
	require.False(t, ok, "17:30 in London passes; the agent's hours are now Paris's, where it is 18:30")
	_, err = f.store.Commit(f.ctx, evening)
	requireCode(t, err, booking.CodeOutsideHours)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// Both paths decide on the store's clock: the fast path took the
// database's when it was later, so a pool's round robin compared one
// path's bookings by one clock and the other's by another.
func TestFastPathDecidesOnTheStoresClock(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "fast-clock", intent("paris", agent(0), "10:00", "10:30"))
	var created, committed time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT created_at, committed_at FROM booking WHERE request_key = 'fast-clock'").Scan(&created, &committed))
	now := f.clock.Now()
	for _, at := range []time.Time{created, committed} {
		require.False(t, at.Before(now), "%s is before the store's clock %s", at, now)
		require.Less(t, at.Sub(now), time.Minute, "%s is the store's clock %s moved on by the statement's wait", at, now)
	}
}
