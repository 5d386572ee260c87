package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// reminded marks key's reminder as texted.
func (f *fixture) reminded(t *testing.T, key string) {
	t.Helper()
	_, err := f.pool.Exec(f.ctx, `INSERT INTO caller_message (request_key, kind, event_id, status, sent_at) VALUES ($1, 'reminder', 1, 'sent', $2)`,
		key, testNow)
	require.NoError(t, err)
}

// A caller's C reaches their bookings still to come that a reminder was
// texted for, through the moves since, once; not one without a texted
// reminder, nor another number's, nor one past.
func TestACallersReplyReconfirmsTheirRemindedBookings(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_first", false)
	f.booked(t, "req_moved", moving("req_first", intent("paris", agent(0), "16:00", "16:30")))
	f.reminded(t, "req_moved")
	f.onFile(t, "req_unreminded", false) // the same caller, no reminder texted

	none, err := f.store.Reconfirm(f.ctx, "+33699999999")
	require.NoError(t, err)
	require.Empty(t, none, "another number")
	keys, err := f.store.Reconfirm(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.Equal(t, []string{"req_moved"}, keys, "the move of the caller's booking, reminded")
	b, err := f.store.Lookup(f.ctx, "req_moved")
	require.NoError(t, err)
	require.NotNil(t, b.ReconfirmedAt)
	first := *b.ReconfirmedAt
	unreminded, err := f.store.Lookup(f.ctx, "req_unreminded")
	require.NoError(t, err)
	require.Nil(t, unreminded.ReconfirmedAt)

	f.clock.Advance(paris("12:00").Sub(testNow))
	_, err = f.store.Reconfirm(f.ctx, "+33612345678")
	require.NoError(t, err)
	b, err = f.store.Lookup(f.ctx, "req_moved")
	require.NoError(t, err)
	require.Equal(t, first, *b.ReconfirmedAt, "the first reply's time stands")

	f.clock.Advance(paris("17:00").Sub(paris("12:00")))
	keys, err = f.store.Reconfirm(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.Empty(t, keys, "a viewing past")
}

// The API records replies under its own login: a STOP on the contacts'
// keys and a C on a booking's reconfirmed_at, and nothing else of the
// booking.
func TestTheAPIsLoginMayRecordReplies(t *testing.T) {
	t.Parallel()
	_, as := roles(t)
	api := New(as("bookingsaga_api"), Config{})
	_, err := api.StopTexts(t.Context(), "+33612345678", true)
	require.NoError(t, err)
	_, err = api.Reconfirm(t.Context(), "+33612345678")
	require.NoError(t, err)
	_, err = as("bookingsaga_api").Exec(t.Context(), "UPDATE booking SET status = 'cancelled' WHERE false")
	require.ErrorContains(t, err, "permission denied", "the booking itself stays the worker's")
}
