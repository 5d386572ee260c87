package store

import (
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
