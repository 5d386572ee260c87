package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// pendingRefused commits key, whose call was answered pending (noted
// before the store decided when first, after it otherwise), into a slot
// another booking holds, with ada's contact sealed.
func (f *fixture) pendingRefused(t *testing.T, key string, first bool) {
	t.Helper()
	sealed, err := f.store.SealContact(f.ctx, key, ada, "Europe/Paris")
	require.NoError(t, err)
	req := commitReq(key, intent("paris", agent(1), "10:00", "10:30"))
	req.Contact = sealed
	note := func() {
		require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCommit, RequestKey: key, Request: &req.CommitRequest}))
	}
	if first {
		note()
	}
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)
	if !first {
		note()
	}
}

// A booking the store refused after its caller was told it was pending
// queues the not_booked message, whichever came first, and keeps the
// contact the pending call sealed for it; a refusal no one was told was
// pending queues nothing and keeps no contact. An erasure takes the
// contact kept.
func TestARefusalOfAPendingBookingIsMessaged(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_holder", intent("paris", agent(0), "10:00", "10:30"))
	f.pendingRefused(t, "req_noted_first", true)
	f.pendingRefused(t, "req_refused_first", false)
	plain := commitReq("req_told", intent("paris", agent(1), "10:00", "10:30"))
	out, err := f.store.Commit(f.ctx, plain)
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)

	due, err := f.store.DueMessages(f.ctx, 10)
	require.NoError(t, err)
	var keys []string
	for _, m := range due {
		require.Equal(t, booking.MessageNotBooked, m.Kind)
		require.Equal(t, "paris", m.Booking.Intent.PropertyID, "the intent refused")
		keys = append(keys, m.RequestKey)
	}
	require.ElementsMatch(t, []string{"req_noted_first", "req_refused_first"}, keys)
	for _, k := range keys {
		c, err := f.store.Contact(f.ctx, k)
		require.NoError(t, err)
		require.Equal(t, ada.Name, c.Name)
	}
	_, err = f.store.Contact(f.ctx, "req_told")
	require.ErrorIs(t, err, booking.ErrNoContact)

	require.NoError(t, f.store.EraseContact(f.ctx, "req_noted_first", "asked"))
	var kept int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM booking_refusal WHERE contact_sealed IS NOT NULL`).Scan(&kept))
	require.Equal(t, 1, kept, "the erased one's copy went")
}
