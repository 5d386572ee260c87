package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Calls answered pending are kept once each, read oldest first page by
// page, and forgotten when settled; a call that can't be sent again is
// refused and writes nothing.
func TestPendingCallsAreKeptUntilSettled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_p1", intent("paris", agent(0), "10:00", "10:30")).CommitRequest
	calls := []booking.PendingCall{
		{Op: booking.PendingCommit, RequestKey: "req_p1", Request: &req},
		{Op: booking.PendingCancel, RequestKey: "req_p1"},
		{Op: booking.PendingReschedule, RequestKey: "req_p2", Replaces: "req_p1", Request: &req},
	}
	for _, c := range calls {
		require.NoError(t, f.store.NotePending(f.ctx, c))
		f.clock.Advance(time.Second)
	}
	again := req
	again.Intent.PropertyID = "elsewhere"
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCommit, RequestKey: "req_p1", Request: &again}))

	for _, bad := range []booking.PendingCall{
		{Op: booking.PendingCommit, RequestKey: "req_p3"},
		{Op: booking.PendingReschedule, RequestKey: "req_p3", Request: &req},
		{Op: "book", RequestKey: "req_p3", Request: &req},
		{Op: booking.PendingCancel, RequestKey: ""},
	} {
		require.Error(t, f.store.NotePending(f.ctx, bad), "%+v", bad)
	}

	var seen []booking.PendingCall
	var after *booking.PendingCall
	for {
		page, err := f.store.PendingCalls(f.ctx, f.clock.Now(), after, 2)
		require.NoError(t, err)
		seen = append(seen, page...)
		if len(page) < 2 {
			break
		}
		after = &page[len(page)-1]
	}
	require.Len(t, seen, 3, "each once, the bad ones not at all")
	for i, c := range seen {
		require.Equal(t, calls[i].Op, c.Op)
		require.Equal(t, calls[i].RequestKey, c.RequestKey)
		require.Equal(t, calls[i].Replaces, c.Replaces)
	}
	require.Equal(t, "paris", seen[0].Request.Intent.PropertyID, "the first answer's call is kept")
	early, err := f.store.PendingCalls(f.ctx, testNow.Add(time.Second), nil, 10)
	require.NoError(t, err)
	require.Len(t, early, 1, "only those answered before the cutoff")

	require.NoError(t, f.store.SettlePending(f.ctx, seen[1]))
	left, err := f.store.PendingCalls(f.ctx, f.clock.Now(), nil, 10)
	require.NoError(t, err)
	require.Len(t, left, 2)
	require.Equal(t, booking.PendingCommit, left[0].Op, "the cancel of the same key went alone")

	f.clock.Advance(31 * 24 * time.Hour)
	_, err = f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	left, err = f.store.PendingCalls(f.ctx, f.clock.Now(), nil, 10)
	require.NoError(t, err)
	require.Empty(t, left, "a call never settled goes when a contact would")
}
