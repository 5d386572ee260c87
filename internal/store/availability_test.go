package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

func TestAvailabilityLeavesOutBookedAndBufferedSlots(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_av", intent("paris", agent(0), "10:00", "10:30"))
	av, err := f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "paris", AgentID: agent(1),
		From: paris("09:00"), To: paris("11:30")})
	require.NoError(t, err)
	require.Equal(t, testPolicy.Version, av.PolicyVersion)
	require.Equal(t, testNow, av.SnapshotAt)
	require.Equal(t, "Europe/Paris", av.TimeZone)
	require.Equal(t, []string{"2026-12-08T09:00:00+01:00", "2026-12-08T09:30:00+01:00", "2026-12-08T10:30:00+01:00",
		"2026-12-08T11:00:00+01:00"}, formatLocal(av))
	require.Equal(t, "2026-12-08T09:00", av.Slots[0].LocalStart)

	_, err = f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "paris", AgentID: "ghost", From: paris("09:00"), To: paris("11:00")})
	requireCode(t, err, booking.CodeUnknownResource)
	_, err = f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "paris", AgentID: agent(1), From: paris("11:00"), To: paris("09:00")})
	requireCode(t, err, booking.CodeInvalidWindow)
}

func formatLocal(a booking.Availability) []string {
	loc, _ := localtime.LoadZone(a.TimeZone)
	out := make([]string, len(a.Slots))
	for i, s := range a.Slots {
		out[i] = s.StartsAt.In(loc).Format(time.RFC3339)
	}
	return out
}

// nightSetup is setup a year earlier, before the 2026 DST changes, under a
// policy open 01:00–04:00 so the changes fall inside bookable hours.
func nightSetup(t *testing.T) *fixture {
	t.Helper()
	f := setup(t)
	f.clock.Advance(-365 * 24 * time.Hour)
	p := testPolicy
	p.Version, p.OpensAt, p.ClosesAt, p.MinNotice = "night", time.Hour, 4*time.Hour, 0
	require.NoError(t, f.store.SetPolicy(f.ctx, p))
	return f
}

func TestAvailabilityAcrossDaylightSavingChanges(t *testing.T) {
	t.Parallel()
	f := nightSetup(t)
	tests := []struct {
		name, property, day string
		want                []string
	}{
		// 02:00–03:00 does not exist: 02:00 and 02:30 are not offered.
		{"paris spring forward", "paris", "2026-03-29", []string{
			"2026-03-29T01:00:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"}},
		// 01:00–02:00 happens twice: 01:00 and 01:30 are ambiguous, not offered.
		{"new york fall back", "ny", "2026-11-01", []string{
			"2026-11-01T02:00:00-05:00", "2026-11-01T02:30:00-05:00", "2026-11-01T03:00:00-05:00", "2026-11-01T03:30:00-05:00"}},
		{"paris fall back", "paris", "2026-10-25", []string{
			"2026-10-25T01:00:00+02:00", "2026-10-25T01:30:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T03:30:00+01:00"}},
		{"new york spring forward", "ny", "2026-03-08", []string{
			"2026-03-08T01:00:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			day, err := time.Parse("2006-01-02", tc.day)
			require.NoError(t, err)
			av, err := f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: tc.property, AgentID: agent(0),
				From: day.Add(-12 * time.Hour), To: day.Add(20 * time.Hour)})
			require.NoError(t, err)
			require.Equal(t, tc.want, formatLocal(av))
			for _, s := range av.Slots {
				require.Equal(t, 30*time.Minute, s.EndsAt.Sub(s.StartsAt), "slots are real durations")
			}
		})
	}
}

func TestCommitOnDaylightSavingDay(t *testing.T) {
	t.Parallel()
	f := nightSetup(t)
	// 01:30 CET to 03:30 CEST is one hour of real time across the gap.
	start := time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC)
	req := CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "req_dst", ExpectedPolicyVersion: "night", Intent: booking.Intent{
		PropertyID: "paris", AgentID: agent(0), StartsAt: start, EndsAt: start.Add(time.Hour), TimeZone: "Europe/Paris"}}}
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
	// New York's 01:30 happens twice; the second one, 06:30Z, is bookable
	// and distinct from the first, 05:30Z.
	for i, utc := range []int{5, 6} {
		s := time.Date(2026, 11, 1, utc, 30, 0, 0, time.UTC)
		out, err := f.store.Commit(f.ctx, CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "req_ny_" + string(rune('a'+i)), ExpectedPolicyVersion: "night",
			Intent: booking.Intent{PropertyID: "ny", AgentID: agent(1 + i), StartsAt: s, EndsAt: s.Add(30 * time.Minute), TimeZone: "America/New_York"}}})
		require.NoError(t, err)
		require.Nil(t, out.Conflict)
	}
}

// A two-hour slot from 01:30 on the spring-forward night ends at 04:30 on
// the wall clock, after closing, though 01:30 + 2h reads 03:30 on paper.
func TestAvailabilityChecksHoursOnTheRealEnd(t *testing.T) {
	t.Parallel()
	f := nightSetup(t)
	day := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)
	av, err := f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "paris", AgentID: agent(0),
		From: day.Add(-12 * time.Hour), To: day.Add(20 * time.Hour), Duration: 2 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, []string{"2026-03-29T01:00:00+01:00"}, formatLocal(av))
	_, err = f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "paris", AgentID: "keys",
		From: day, To: day.Add(20 * time.Hour)})
	requireCode(t, err, booking.CodeWrongResourceKind)
}
