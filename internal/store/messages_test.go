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

// withCaller is r with a caller's contact, sealed as the API seals it.
func (f *fixture) withCaller(t *testing.T, r CommitRequest) CommitRequest {
	t.Helper()
	sealed, err := f.store.SealContact(f.ctx, r.RequestKey, ada, "Europe/Paris")
	require.NoError(t, err)
	r.Contact = sealed
	return r
}

// Each decision queues its caller's message in its own transaction, once:
// a replayed commit, a held slot, a conflict add none; a move queues the
// new booking's, a cancel its own.
func TestEveryDecisionQueuesOneMessage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := intent("paris", agent(0), "10:00", "10:30")
	for range 2 {
		_, err := f.store.Commit(f.ctx, f.withCaller(t, commitReq("req_m1", in)))
		require.NoError(t, err)
	}
	require.Equal(t, []booking.MessageKind{booking.MessageConfirmed}, f.kinds(t, "req_m1"), "a replay adds none")

	_, err := f.store.Commit(f.ctx, commitReq("req_m2", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err) // a conflict
	held := f.withCaller(t, commitReq("req_m3", intent("paris", agent(2), "12:00", "12:30")))
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
	require.Equal(t, []booking.MessageKind{booking.MessageRescheduled}, f.kinds(t, "req_m4"), "a move writes to its caller's contact")
	_, err = f.store.Commit(f.ctx, commitReq("req_m5", intent("paris", agent(3), "16:00", "16:30")))
	require.NoError(t, err)
	require.Empty(t, f.kinds(t, "req_m5"), "no contact, no caller to write to: no row")
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
	tries, mine, err := f.store.MessageTry(f.ctx, due[0].ID, time.Minute)
	require.NoError(t, err)
	require.True(t, mine)
	require.Zero(t, tries, "none before")
	_, mine, err = f.store.MessageTry(f.ctx, due[0].ID, time.Minute)
	require.NoError(t, err)
	require.False(t, mine, "leased to the first try")
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

// A booking's reminder time is the store's, by the policy it was confirmed
// under, on every path that confirms it; none inside the window; and its
// reminder is queued once, only while it is confirmed.
func TestTheReminderIsThePolicysAndQueuedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	under := func(version string, reminder time.Duration) func(string, booking.Intent) CommitRequest {
		p := testPolicy
		p.Version, p.Reminder = version, reminder
		require.NoError(t, f.store.SetPolicy(f.ctx, p))
		return func(key string, in booking.Intent) CommitRequest {
			r := commitReq(key, in)
			r.ExpectedPolicyVersion = version
			return r
		}
	}
	day := under("showing-policy-r1", 24*time.Hour)
	remindAt := func(key string) *time.Time {
		b, err := f.store.Lookup(f.ctx, key)
		require.NoError(t, err)
		return b.RemindAt
	}
	want := paris("10:00").Add(-24 * time.Hour).UTC()
	out, err := f.store.Commit(f.ctx, f.withCaller(t, day("req_r1", intent("paris", agent(0), "10:00", "10:30"))))
	require.NoError(t, err)
	require.Equal(t, &want, out.Booking.RemindAt, "the commit's answer")
	require.Equal(t, &want, remindAt("req_r1"), "the store's record")
	first := out.Booking.BookingID

	held := f.withCaller(t, day("req_r2", intent("paris", agent(1), "12:00", "12:30")))
	held.Hold = true
	out, err = f.store.Commit(f.ctx, held)
	require.NoError(t, err)
	require.Nil(t, out.Booking.RemindAt, "a hold reminds nobody")
	confirmed, err := f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_r2"})
	require.NoError(t, err)
	noon := paris("12:00").Add(-24 * time.Hour).UTC()
	require.Equal(t, &noon, confirmed.RemindAt)

	moved, err := f.store.Commit(f.ctx, day("req_r3", moving("req_r1", intent("paris", agent(0), "15:00", "15:30"))))
	require.NoError(t, err)
	three := paris("15:00").Add(-24 * time.Hour).UTC()
	require.Equal(t, &three, moved.Booking.RemindAt, "the full path's answer")

	late := under("showing-policy-r2", 48*time.Hour)
	out, err = f.store.Commit(f.ctx, late("req_r4", intent("paris", agent(2), "16:00", "16:30")))
	require.NoError(t, err)
	require.Nil(t, out.Booking.RemindAt, "booked inside the window: just told")
	require.Nil(t, remindAt("req_r4"))

	for range 2 {
		queued, err := f.store.QueueReminder(f.ctx, "req_r2", confirmed.BookingID)
		require.NoError(t, err)
		require.True(t, queued)
	}
	require.Equal(t, []booking.MessageKind{booking.MessageConfirmed, booking.MessageReminder}, f.kinds(t, "req_r2"), "once")
	queued, err := f.store.QueueReminder(f.ctx, "req_r1", first)
	require.NoError(t, err)
	require.False(t, queued, "moved away: its reminder is the new booking's")
	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_r3"})
	require.NoError(t, err)
	queued, err = f.store.QueueReminder(f.ctx, "req_r3", moved.Booking.BookingID)
	require.NoError(t, err)
	require.False(t, queued, "cancelled: no reminder")
	require.Equal(t, []booking.MessageKind{booking.MessageRescheduled, booking.MessageCancelled}, f.kinds(t, "req_r3"))
}

// A provider's failure is kept for ops without the caller's number or
// address (DLM2), and goes with the contact when it is erased.
func TestAMessagesStoredErrorHoldsNoContact(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.store.Commit(f.ctx, f.withCaller(t, commitReq("req_e1", intent("paris", agent(0), "10:00", "10:30"))))
	require.NoError(t, err)
	due, err := f.store.DueMessages(f.ctx, 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	why := `find sms: Get "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages.json?To=%2B33612345678&PageSize=20": ` +
		`dial tcp: i/o timeout; sent to +33 6 12 34 56 78 for ada@example.com`
	require.NoError(t, f.store.MessageFailed(f.ctx, due[0].ID, why))
	msgs, err := f.store.Messages(f.ctx, "req_e1")
	require.NoError(t, err)
	require.NotEmpty(t, msgs[0].LastError)
	for _, personal := range []string{"612345678", "6 12 34 56 78", "ada@", "example.com"} {
		require.NotContains(t, msgs[0].LastError, personal)
	}
	require.Contains(t, msgs[0].LastError, "i/o timeout", "the cause stays")

	require.NoError(t, f.store.EraseContact(f.ctx, "req_e1", "request"))
	msgs, err = f.store.Messages(f.ctx, "req_e1")
	require.NoError(t, err)
	require.Empty(t, msgs[0].LastError, "erased with the contact")
}
