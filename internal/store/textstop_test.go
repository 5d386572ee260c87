package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
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

// A reply not understood is answered about the caller's booking to come,
// once a day, and never after their STOP.
func TestAReplyNotUnderstoodIsAnsweredOnceADayAndNeverAfterAStop(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_first", false)
	a, ok, err := f.store.AnswerOnce(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "req_first", a.Booking.RequestKey)
	require.Len(t, a.Token, 22)
	_, ok, err = f.store.AnswerOnce(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.False(t, ok, "the same day")

	f.clock.Advance(booking.ReplyAnswerEvery - time.Minute)
	_, ok, err = f.store.AnswerOnce(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.False(t, ok, "not yet a day")
	f.clock.Advance(time.Minute)
	_, err = f.store.StopTexts(f.ctx, "+33612345678", true)
	require.NoError(t, err)
	_, ok, err = f.store.AnswerOnce(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.False(t, ok, "after a STOP")
	_, err = f.store.StopTexts(f.ctx, "+33612345678", false)
	require.NoError(t, err)
	_, ok, err = f.store.AnswerOnce(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.True(t, ok, "a day on, after a START")
}
