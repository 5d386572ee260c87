package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const newKey = "key-0002"

// confirmed makes the commit of key succeed with req.
func (f *fixture) confirmed(k string, req booking.CommitRequest) {
	f.commitConfirms(k, req)
}

func TestCalendarFailuresRetryAndNeverUnconfirm(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	calls := 0
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, forKey(key)).Return(func(context.Context, booking.KeyInput) (booking.SyncOutput, error) {
		calls++
		if calls <= 5 {
			return booking.SyncOutput{}, errors.New("calendar 503")
		}
		return booking.SyncOutput{EventID: "bsevent"}, nil
	})
	f.env.OnActivity(f.a.SyncCRM, mock.Anything, mock.Anything).Return(booking.SyncOutput{CRMRef: "crm-1"}, nil)
	u := f.update(time.Second, booking.UpdateCommit, req)
	var midway BookingState
	f.env.RegisterDelayedCallback(func() { midway = f.state() }, 3*time.Second)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, u.receipt.Status)
	require.Equal(t, StateConfirmed, midway.State, "a failing calendar does not touch the booking")
	require.False(t, midway.CalendarSynced)
	require.Equal(t, 6, calls)
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.True(t, f.state().CalendarSynced)
}

func TestCancelReleasesThenMirrorsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	f.mirrorsOK()
	f.env.OnActivity(f.a.Release, mock.Anything, releaseOf(key)).
		Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusCancelled)}, nil).Once()
	f.update(time.Second, booking.UpdateCommit, req)
	first := f.update(time.Minute, booking.UpdateCancel, CancelRequest{})
	second := f.update(time.Minute, booking.UpdateCancel, CancelRequest{})

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusCancelled, first.receipt.Status)
	require.Equal(t, first.receipt, second.receipt)
	require.Equal(t, receipt.StatusCancelled, final.Status)
	require.True(t, f.state().CalendarSynced, "the event removal ran after the release")
}

func TestHoldExpires(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	req.Hold = true
	held := stored(key, req, booking.StatusHeld)
	expiry := slotStart.Add(-48*time.Hour + 10*time.Minute)
	held.HoldExpiresAt = &expiry
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).Return(booking.CommitOutput{Booking: held}, nil).Once()
	f.env.OnActivity(f.a.ExpireHold, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusExpired)}, nil).Once()
	f.mirrorsOK()
	u := f.update(time.Second, booking.UpdateSelect, req)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusHeld, u.receipt.Status)
	require.Equal(t, expiry, *u.receipt.HoldExpiresAt)
	require.Equal(t, receipt.StatusExpired, final.Status)
}

// rescheduleSetup confirms the old booking, then asks to move it.
func rescheduleSetup(t *testing.T) (*fixture, booking.CommitRequest, *updateResult) {
	return rescheduleSignalling(t, 0)
}

// rescheduleSignalling is rescheduleSetup with the new saga's signal to
// the old one taking delay of workflow time to be delivered.
func rescheduleSignalling(t *testing.T, delay time.Duration) (*fixture, booking.CommitRequest, *updateResult) {
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	f.mirrorsOK()
	f.update(time.Second, booking.UpdateCommit, req)
	// The test environment runs the new saga as a child but does not route
	// its signal back to the parent; deliver it as the server would.
	f.env.OnSignalExternalWorkflow(mock.Anything, key, "", booking.SignalReplacement, mock.Anything).Return(
		func(_, _, _, name string, arg any) error {
			f.env.SignalWorkflow(name, arg)
			return nil
		}).After(delay).Maybe()
	moved := request(slotStart.Add(2 * time.Hour))
	u := f.update(time.Minute, booking.UpdateReschedule, RescheduleRequest{NewRequestKey: newKey, Commit: moved})
	return f, moved, u
}

// The new booking's commit releases the old one in the same store
// transaction; the old saga reads that from the store.
func TestRescheduleConfirmedReadsTheOldAsReleased(t *testing.T) {
	t.Parallel()
	f, moved, u := rescheduleSetup(t)
	moved.Intent.Replaces = key
	f.confirmed(newKey, moved)
	old := stored(key, request(slotStart), booking.StatusReleasedForReschedule)
	old.ReplacedByRequestKey = newKey
	// Not Once: if the viewing's end fires before the replacement's signal
	// (the test environment runs the child in its own goroutine), the
	// saga's final read (changeFinalRead) asks the store again, and hears
	// the same. CI met that order once.
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: true, Booking: old}, nil)
	// Maybe: the new saga, run beside it, reads its own booking if its
	// timers come first; unmocked, that read ran the real activity over a
	// nil store, which panicked and was retried until a CI run under the
	// race detector hit the test's timeout (as in the test below).
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(newKey)).Return(
		booking.LookupOutput{Found: true, Booking: stored(newKey, moved, booking.StatusConfirmed)}, nil).Maybe()

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, u.receipt.Status)
	require.Equal(t, newKey, u.receipt.RequestKey)
	require.Equal(t, key, u.receipt.Replaces)
	require.Equal(t, receipt.StatusRescheduled, final.Status)
	require.Equal(t, newKey, final.ReplacedBy)
	require.False(t, strings.Contains(f.logs.String(), "disagreed"), "a reschedule's own release was logged as drift")
}

func TestRescheduleConflictLeavesTheOldAlone(t *testing.T) {
	t.Parallel()
	f, _, u := rescheduleSetup(t)
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(newKey)).
		Return(booking.CommitOutput{}, temporal.NewNonRetryableApplicationError("taken", booking.ErrTypeConflict, nil, booking.ConflictDetail{})).Once()
	// The old saga reads its own record once the move is decided: untouched.
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).
		Return(booking.LookupOutput{Found: true, Booking: stored(key, request(slotStart), booking.StatusConfirmed)}, nil)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConflict, u.receipt.Status)
	require.Equal(t, key, u.receipt.Replaces)
	require.Equal(t, receipt.StatusConfirmed, final.Status, "no Release mock: the old booking was never touched")
}

func TestRescheduleUnknownReleasesNothingUntilKnown(t *testing.T) {
	t.Parallel()
	f, moved, u := rescheduleSetup(t)
	moved.Intent.Replaces = key
	var order []string
	// Each attempt outlasts the caller's wait, so the caller hears pending.
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(newKey)).After(5 * time.Second).Return(func(context.Context, booking.CommitInput) (booking.CommitOutput, error) {
		order = append(order, "commit new")
		if len(order) == 1 {
			return booking.CommitOutput{}, errors.New("timeout")
		}
		return booking.CommitOutput{Booking: stored(newKey, moved, booking.StatusConfirmed)}, nil
	}).Times(2)
	// Not Once either: the new booking is read again after the move (the
	// extra call, unmocked, ran the real activity over a nil store, which
	// panicked and was retried until a CI run under the race detector hit
	// the test's timeout).
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(newKey)).Return(func(context.Context, booking.KeyInput) (booking.LookupOutput, error) {
		order = append(order, "lookup new")
		return booking.LookupOutput{}, nil
	})
	old := stored(key, request(slotStart), booking.StatusReleasedForReschedule)
	// Not Once, as in TestRescheduleConfirmedReadsTheOldAsReleased: the
	// viewing's end may fire before the replacement's signal, and the
	// final read asks again. CI met that order here too.
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(func(context.Context, booking.KeyInput) (booking.LookupOutput, error) {
		order = append(order, "lookup old")
		return booking.LookupOutput{Found: true, Booking: old}, nil
	})

	final := f.run(BookingInput{RequestKey: key})
	known := slices.Index(order[1:], "commit new") + 1 // the second attempt, which commits
	require.Positive(t, known, "two attempts: %v", order)
	require.Equal(t, "commit new", order[0])
	for _, step := range order[1:known] {
		require.Equal(t, "lookup new", step, "while the new booking is unknown, only it is read: %v", order)
	}
	require.Greater(t, known, 1, "absent, it is looked up before it is sent again: %v", order)
	require.Contains(t, order[known+1:], "lookup old", "the old booking is read once the new one is known: %v", order)
	require.NotContains(t, order[known+1:], "commit new", "nothing is sent again after the move: %v", order)
	require.Equal(t, receipt.StatusPending, u.receipt.Status)
	require.Equal(t, receipt.Reference(newKey), u.receipt.Reference)
	require.Equal(t, key, u.receipt.Replaces)
	require.Equal(t, receipt.StatusRescheduled, final.Status)
}

func TestCancelWhileUnknownIsCarriedOutOnceConfirmed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).After(5*time.Second).Return(booking.CommitOutput{}, errors.New("timeout")).Once()
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusConfirmed)}, nil).Once()
	f.env.OnActivity(f.a.Release, mock.Anything, releaseOf(key)).
		Return(booking.LookupOutput{Found: true, Booking: stored(key, req, booking.StatusCancelled)}, nil).Once()
	f.mirrorsOK()
	f.update(time.Second, booking.UpdateCommit, req)
	c := f.update(2*time.Second, booking.UpdateCancel, CancelRequest{})

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusPending, c.receipt.Status, "the cancel cannot be confirmed before the booking is known")
	require.Equal(t, receipt.StatusCancelled, final.Status, "the booking that turned out confirmed was cancelled")
}

func TestCommitDuringASlowHoldConfirmsIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	req.Hold = true
	held := stored(key, req, booking.StatusHeld)
	expiry := slotStart.Add(-47 * time.Hour)
	held.HoldExpiresAt = &expiry
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(key)).After(5*time.Second).Return(booking.CommitOutput{Booking: held}, nil).Once()
	box := []byte("sealed contact")
	withContact := mock.MatchedBy(func(in booking.ConfirmInput) bool {
		return in.RequestKey == key && in.Contact != nil && string(in.Contact.Sealed) == string(box)
	})
	f.env.OnActivity(f.a.Confirm, mock.Anything, withContact).Return(booking.CommitOutput{Booking: stored(key, req, booking.StatusConfirmed)}, nil).Once()
	f.storeHolds(stored(key, req, booking.StatusConfirmed))
	f.mirrorsOK()
	f.update(time.Second, booking.UpdateSelect, req)
	commit := req
	commit.Hold = false
	commit.Contact = &booking.Contact{Sealed: box} // the book brings the caller's contact
	c := f.update(2*time.Second, booking.UpdateCommit, commit)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusPending, c.receipt.Status)
	require.Equal(t, receipt.StatusConfirmed, final.Status, "the hold was confirmed once it landed, not left to expire")
}

func TestRefusedMirrorIsNotRetried(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, forKey(key)).Return(booking.SyncOutput{EventID: "bsevent"}, nil).Once()
	f.env.OnActivity(f.a.SyncCRM, mock.Anything, forKey(key)).
		Return(booking.SyncOutput{}, temporal.NewNonRetryableApplicationError("crm 422", booking.ErrTypeMirrorRefused, nil)).Once()
	u := f.update(time.Second, booking.UpdateCommit, req)
	var midway BookingState
	f.env.RegisterDelayedCallback(func() { midway = f.state() }, time.Hour)

	f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, u.receipt.Status)
	require.Equal(t, StateConfirmed, midway.State)
	require.True(t, midway.CalendarSynced)
	require.False(t, midway.CRMSynced, "refused once, and left to the operator: no retry")
	require.Contains(t, midway.LastError, "crm 422")
}

func TestRateLimitedFirstTryWaitsForRetryAfter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	var tries []time.Time
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, forKey(key)).Return(func(context.Context, booking.KeyInput) (booking.SyncOutput, error) {
		tries = append(tries, f.env.Now())
		if len(tries) == 1 {
			return booking.SyncOutput{}, temporal.NewApplicationErrorWithOptions("calendar 429", "RateLimited",
				temporal.ApplicationErrorOptions{NextRetryDelay: 40 * time.Second})
		}
		return booking.SyncOutput{EventID: "bsevent"}, nil
	})
	f.env.OnActivity(f.a.SyncCRM, mock.Anything, mock.Anything).Return(booking.SyncOutput{CRMRef: "crm-1"}, nil)
	f.update(time.Second, booking.UpdateCommit, req)

	f.run(BookingInput{RequestKey: key})
	require.Len(t, tries, 2)
	require.GreaterOrEqual(t, tries[1].Sub(tries[0]), 40*time.Second, "the retry waited for Retry-After")
	require.True(t, f.state().CalendarSynced)
}

// releaseOf matches the release of key that sends the confirmed booking
// the saga holds, for a store that lost it to record it cancelled.
func releaseOf(key string) any {
	return mock.MatchedBy(func(in booking.ReleaseInput) bool {
		return in.RequestKey == key && in.Booking != nil && in.Booking.RequestKey == key && in.Booking.Status == booking.StatusConfirmed
	})
}

// The saga reads the store at the viewing's end (changeFinalRead); a
// record that says what the saga already holds, with both mirrors synced,
// has nothing to mirror. Before changeUnchangedRecord every booking wrote
// its calendar events and its CRM record again there.
func TestAViewingsEndWritesNoMirrorForAnUnchangedRecord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	f.confirmed(key, req)
	// The two first tries run side by side, as local activities.
	var calendar, crm atomic.Int32
	f.env.OnActivity(f.a.SyncCalendar, mock.Anything, forKey(key)).Return(func(context.Context, booking.KeyInput) (booking.SyncOutput, error) {
		calendar.Add(1)
		return booking.SyncOutput{EventID: "bsevent"}, nil
	})
	f.env.OnActivity(f.a.SyncCRM, mock.Anything, forKey(key)).Return(func(context.Context, booking.KeyInput) (booking.SyncOutput, error) {
		crm.Add(1)
		return booking.SyncOutput{CRMRef: "crm-1"}, nil
	})
	f.update(time.Second, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, []int32{1, 1}, []int32{calendar.Load(), crm.Load()}, "each mirror is written once, after the commit")
}

// A new saga whose signal to the booking it replaces is still on its way
// when its loop next waits has a commit runner alive and nothing else to
// wait for, so no timer. Once the runner ends, the loop wakes and sets the
// viewing's timer: it used to wait for good, and the saga never closed nor
// reminded its caller (CI met that order once, as a test's timeout).
func TestANewBookingSlowToTellTheOldOneStillClosesAfterItsViewing(t *testing.T) {
	t.Parallel()
	f, moved, u := rescheduleSignalling(t, time.Minute)
	moved.Intent.Replaces = key
	f.confirmed(newKey, moved)
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(
		booking.LookupOutput{Found: true, Booking: stored(key, request(slotStart), booking.StatusReleasedForReschedule)}, nil)
	var lastRead atomic.Int64 // when the new saga last read its record
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(newKey)).Return(func(context.Context, booking.KeyInput) (booking.LookupOutput, error) {
		lastRead.Store(f.env.Now().UnixNano())
		return booking.LookupOutput{Found: true, Booking: stored(newKey, moved, booking.StatusConfirmed)}, nil
	})

	final := f.run(BookingInput{RequestKey: key})
	require.Equal(t, receipt.StatusRescheduled, final.Status)
	require.Equal(t, receipt.StatusPending, u.receipt.Status, "the old saga heard nothing within the caller's wait")
	require.False(t, time.Unix(0, lastRead.Load()).Before(moved.Intent.EndsAt),
		"the new saga's final read, at its viewing's end: %v", time.Unix(0, lastRead.Load()).UTC())
}

// TestACommitThatCameWithTheStartJoinsTheMove: a move of a booking whose
// saga has closed starts the new saga with the move (naming the booking
// it replaces) and a commit update in one call; the SDK runs the update
// as soon as its handler is set. The update must join the move, not
// commit the slot as a booking of its own.
func TestACommitThatCameWithTheStartJoinsTheMove(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := request(slotStart)
	move := req
	move.Intent.Replaces = key
	var replaces []string // what each commit sent named
	f.env.OnActivity(f.a.Commit, mock.Anything, forKey(newKey)).Return(func(_ context.Context, in booking.CommitInput) (booking.CommitOutput, error) {
		replaces = append(replaces, in.Intent.Replaces)
		return booking.CommitOutput{}, temporal.NewNonRetryableApplicationError("cancelled", booking.ErrTypeRejected, nil,
			booking.Rejection{Code: booking.CodeInvalidReplacement, Message: "booking is cancelled and cannot be rescheduled"})
	}).Once()
	f.env.OnSignalExternalWorkflow(mock.Anything, key, "", booking.SignalReplacement, mock.Anything).Return(nil).Once()
	u := f.update(0, booking.UpdateCommit, req)

	final := f.run(BookingInput{RequestKey: newKey, Commit: &move})
	require.Equal(t, []string{key}, replaces, "one commit, of the move")
	require.True(t, u.done)
	require.NoError(t, u.err)
	require.Equal(t, receipt.StatusRejected, u.receipt.Status, "the store's answer to the move")
	require.Equal(t, string(booking.CodeInvalidReplacement), u.receipt.Reason.Code)
	require.Equal(t, receipt.StatusRejected, final.Status)
}
