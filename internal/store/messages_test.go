package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// kinds lists what was queued for key's caller, oldest first.
func (f *fixture) kinds(t *testing.T, key string) []booking.MessageKind {
	t.Helper()
	msgs, err := f.store.Messages(f.ctx, key)
	require.NoError(t, err)
	var out []booking.MessageKind
	for _, m := range msgs {
		out = append(out, m.Kind)
	}
	return out
}

// Each decision queues its caller's message in its own transaction, once:
// a replayed commit, a held slot, a conflict add none; a move queues the
// new booking's, a cancel its own.
func TestEveryDecisionQueuesOneMessage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := intent("paris", agent(0), "10:00", "10:30")
	for range 2 {
		_, err := f.store.Commit(f.ctx, commitReq("req_m1", in))
		require.NoError(t, err)
	}
	require.Equal(t, []booking.MessageKind{booking.MessageConfirmed}, f.kinds(t, "req_m1"), "a replay adds none")

	_, err := f.store.Commit(f.ctx, commitReq("req_m2", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err) // a conflict
	held := commitReq("req_m3", intent("paris", agent(2), "12:00", "12:30"))
	held.Hold = true
	_, err = f.store.Commit(f.ctx, held)
	require.NoError(t, err)
	require.Empty(t, f.kinds(t, "req_m2"), "a conflict books nothing")
	require.Empty(t, f.kinds(t, "req_m3"), "a hold is not a booking yet")
	_, err = f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_m3"})
	require.NoError(t, err)
	require.Equal(t, []booking.MessageKind{booking.MessageConfirmed}, f.kinds(t, "req_m3"))

	_, err = f.store.Commit(f.ctx, commitReq("req_m4", moving("req_m1", intent("paris", agent(0), "14:00", "14:30"))))
	require.NoError(t, err)
	require.Equal(t, []booking.MessageKind{booking.MessageRescheduled}, f.kinds(t, "req_m4"))
	require.Equal(t, []booking.MessageKind{booking.MessageConfirmed}, f.kinds(t, "req_m1"), "the move's own message tells it")

	for range 2 {
		_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_m4"})
		require.NoError(t, err)
	}
	require.Equal(t, []booking.MessageKind{booking.MessageRescheduled, booking.MessageCancelled}, f.kinds(t, "req_m4"))

	due, err := f.store.DueMessages(f.ctx, 10)
	require.NoError(t, err)
	require.Len(t, due, 4)
	require.Equal(t, booking.StatusCancelled, due[3].Booking.Status, "each with its booking as it is now")
	require.NoError(t, f.store.MessageDone(f.ctx, due[0].ID, booking.MessageSent, booking.ChannelSMS, "SM1", ""))
	require.NoError(t, f.store.MessageDone(f.ctx, due[0].ID, booking.MessageStale, "", "", ""), "a message ends once")
	require.NoError(t, f.store.MessageHeld(f.ctx, due[1].ID, f.clock.Now().Add(time.Hour)))
	due, err = f.store.DueMessages(f.ctx, 10)
	require.NoError(t, err)
	require.Len(t, due, 2, "the sent one and the one held for quiet hours are not due")
	msgs, err := f.store.Messages(f.ctx, "req_m1")
	require.NoError(t, err)
	require.Equal(t, []booking.MessageRecord{{Kind: booking.MessageConfirmed, Status: booking.MessageSent, Channel: booking.ChannelSMS,
		ProviderID: "SM1", Attempts: 1}}, msgs)
}
