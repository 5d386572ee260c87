package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// withReminder is b as the store confirms it under a policy that reminds
// a day ahead.
func withReminder(b booking.Booking) booking.Booking {
	at := b.Intent.StartsAt.Add(-24 * time.Hour)
	b.RemindAt = &at
	return b
}

// remindersAt records when, by the test clock, the saga asked the store
// to queue its caller's reminder.
func (f *fixture) remindersAt(queued bool) *[]time.Time {
	var at []time.Time
	f.env.OnActivity(f.a.QueueReminder, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in booking.ReminderInput) (booking.ReminderOutput, error) {
			require.Equal(f.t, key, in.RequestKey)
			at = append(at, f.env.Now().UTC())
			return booking.ReminderOutput{Queued: queued}, nil
		}).Maybe()
	return &at
}

func TestTheCallerIsRemindedAtThePolicysTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	confirmed := withReminder(stored(key, req, booking.StatusConfirmed))
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).Return(booking.CommitOutput{Booking: confirmed}, nil).Once()
	f.storeHolds(confirmed)
	f.mirrorsOK()
	at := f.remindersAt(true)
	f.update(time.Second, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, []time.Time{*confirmed.RemindAt}, *at, "one reminder, at the booking's reminder time")
	require.True(t, f.state().Reminded)
}

func TestNoReminderForACancelledOrUnremindedBooking(t *testing.T) {
	t.Parallel()
	t.Run("cancelled before its time", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		req := request(slotStart)
		f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).
			Return(booking.CommitOutput{Booking: withReminder(stored(key, req, booking.StatusConfirmed))}, nil).Once()
		f.env.OnActivity(f.a.Release, mock.Anything, releaseOf(key)).
			Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusCancelled)}, nil).Once()
		f.mirrorsOK()
		at := f.remindersAt(true)
		f.update(time.Second, booking.UpdateCommit, req)
		f.update(time.Hour, booking.UpdateCancel, CancelRequest{})
		require.Equal(t, receipt.StatusCancelled, f.run(BookingInput{RequestKey: key}).Status)
		require.Empty(t, *at)
	})
	t.Run("booked inside the window", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		req := request(slotStart)
		f.commitConfirms(key, req) // the store set no reminder time
		f.mirrorsOK()
		at := f.remindersAt(true)
		f.update(time.Second, booking.UpdateCommit, req)
		require.Equal(t, receipt.StatusConfirmed, f.run(BookingInput{RequestKey: key}).Status)
		require.Empty(t, *at)
	})
}

func TestTheSendersNoticeReachesTheOperatorsView(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.commitConfirms(key, req)
	f.mirrorsOK()
	var notified []bool
	f.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetBool(visibility.AttrCallerNotified); ok {
			notified = append(notified, v)
		}
	}).Return(nil)
	f.update(time.Second, booking.UpdateCommit, req)
	f.env.RegisterDelayedCallback(func() {
		f.env.SignalWorkflow(booking.SignalCallerMessaged, booking.MessageNotice{Kind: booking.MessageConfirmed, Status: booking.MessageSent})
	}, time.Minute)
	f.env.RegisterDelayedCallback(func() {
		f.env.SignalWorkflow(booking.SignalCallerMessaged, booking.MessageNotice{Kind: booking.MessageReminder, Status: booking.MessageUndeliverable})
	}, time.Hour)
	f.run(BookingInput{RequestKey: key})
	require.Equal(t, []bool{true, false}, notified, "sent, then refused for good: in the operator's filter")
	require.Equal(t, booking.MessageUndeliverable, f.state().Messaged)
}
