package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFastPathConfirmsOnlyWhatTheFullPathWould checks the one-round-trip
// commit against the full path: it takes the plain case, and declines
// (writing nothing) every case the full path refuses or must decide itself.
func TestFastPathConfirmsOnlyWhatTheFullPathWould(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out, ok := f.store.commitFast(f.ctx, commitReq("fast-1", intent("paris", agent(0), "10:00", "10:30")))
	require.True(t, ok, "the plain case takes the fast path")
	got, err := f.store.Lookup(f.ctx, "fast-1")
	require.NoError(t, err)
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
		"outside hours":  commitReq("fast-6", intent("paris", agent(4), "07:00", "07:30")),
		"past closing":   commitReq("fast-7", intent("paris", agent(5), "19:45", "20:15")),
		"wrong kind":     commitReq("fast-8", intent("paris", "keys", "12:00", "12:30")),
		"unknown":        commitReq("fast-9", intent("atlantis", agent(6), "12:00", "12:30")),
		"zone mismatch":  commitReq("fast-10", utc),
		"other property": commitReq("fast-11", nyc),
		"hold": func() CommitRequest {
			r := commitReq("fast-12", intent("paris", agent(8), "14:00", "14:30"))
			r.Hold = true
			return r
		}(),
	}
	for name, req := range cases {
		_, ok := f.store.commitFast(f.ctx, req)
		require.False(t, ok, name)
	}
	require.Equal(t, before, f.count(t), "declining writes nothing")

	f.clock.Advance(2*24*time.Hour + 9*time.Hour) // 2026-12-09 15:00Z: the 10:00 slot has passed
	_, ok = f.store.commitFast(f.ctx, commitReq("fast-13", intent("paris", agent(9), "11:00", "11:30")))
	require.False(t, ok, "in the past")
}
