package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// What a restore from an older backup loses besides a booking: the
// cancellations and moves made after the backup, and holds. Each case
// ends with the store and every answer agreeing.

// published waits until key's saga shows its change in visibility, where
// reconciliation reads it.
func (f *fixture) published(key string) {
	f.t.Helper()
	f.eventually(func() bool {
		return f.count(visibility.ReleasedQuery(agency.Default, f.queue)+" AND WorkflowId = '"+key+"'") == 1
	},
		"the saga published its release")
}

// cancelThroughAPI cancels key as its caller would, and requires the
// answer cancelled.
func (f *fixture) cancelThroughAPI(url, key string) {
	f.t.Helper()
	var r receipt.Receipt
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/cancel", nil, &r))
	require.Equal(f.t, receipt.StatusCancelled, r.Status, "%+v", r.Reason)
}

// bookThroughAPI books body, then sends it again five times, as a platform
// resends a call that timed out: every answer confirmed.
func (f *fixture) bookThroughAPI(url string, body api.BookingBody) {
	f.t.Helper()
	for range 6 {
		var r receipt.Receipt
		require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
		require.Equal(f.t, receipt.StatusConfirmed, r.Status, "%+v", r.Reason)
	}
}

// moveThroughAPI moves key's booking to hour under the new key moved.
func (f *fixture) moveThroughAPI(url, key, moved string, hour int) {
	f.t.Helper()
	var r receipt.Receipt
	move := edge.RescheduleBody{NewRequestKey: moved, Slot: bookingBody(moved, slot(f.t, hour)).Slot, ExpectedPolicyVersion: policyVersion}
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/reschedule", move, &r))
	require.Equal(f.t, receipt.StatusConfirmed, r.Status, "%+v", r.Reason)
}

// restored runs ops restore on key and requires it answered want.
func (f *fixture) restored(key string, want receipt.Status) receipt.Receipt {
	f.t.Helper()
	r, err := f.sagas().Restore(f.ctx, key)
	require.NoError(f.t, err)
	require.Equal(f.t, want, r.Status, "%+v", r.Reason)
	return r
}

// revive sets key's booking live again, as a store restored from a
// backup taken before its cancel or move holds it.
func (f *fixture) revive(key string) {
	f.t.Helper()
	_, err := f.pool.Exec(f.ctx, `WITH b AS (UPDATE booking SET status = 'confirmed', released_at = NULL, replaced_by_request_key = NULL
WHERE request_key = $1 RETURNING booking_id)
UPDATE booking_resource SET live = true WHERE booking_id IN (SELECT booking_id FROM b)`, key)
	require.NoError(f.t, err)
}

// moved books a slot at hour and moves it to newHour through the API,
// and returns the old and the new key once the old saga has published
// the move.
func (f *fixture) moved(url string, hour, newHour int) (old, moved string) {
	f.t.Helper()
	old, moved = f.booked(hour), uuid.NewString()
	var r receipt.Receipt
	body := map[string]string{"new_request_key": moved, "starts_at": slot(f.t, newHour).Format(time.RFC3339)}
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+old+"/reschedule", body, &r))
	require.Equal(f.t, receipt.StatusConfirmed, r.Status, "%+v", r.Reason)
	f.published(old)
	return old, moved
}

// lostMove is moved, after which the store loses the new booking.
func (f *fixture) lostMove(url string, hour, newHour int) (old, moved string) {
	f.t.Helper()
	old, moved = f.moved(url, hour, newHour)
	f.lose(moved)
	return old, moved
}

// TestACancelOfABookingTheStoreLostIsRecordedCancelled: the caller cancels
// a booking the store lost. There is nothing to release, and the caller
// no longer wants it: the store records it cancelled, the answer is
// cancelled, never "confirmed" for a booking the store does not hold, and
// nothing is left for an operator to restore.
func TestACancelOfABookingTheStoreLostIsRecordedCancelled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, key := f.lostBooking(13)
	require.Equal(t, 1, f.reconcile().Stuck.Lost)

	f.cancelThroughAPI(url, key)
	require.Equal(t, "cancelled", f.storeStatus(key))
	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	for _, fl := range flags {
		require.NotEqual(t, "store_lost_booking", fl.Kind, "nothing left to restore: %+v", fl)
	}
}

// TestABookingLostWithItsCancellationIsRecordedReleased: booked and
// cancelled after the backup, the store lost both. The saga and the caller
// say cancelled; a reconciliation run records that in the store, once.
func TestABookingLostWithItsCancellationIsRecordedReleased(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := f.booked(16)
	f.cancelThroughAPI(url, key)
	f.published(key)
	f.lose(key)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.ReleasesRecorded, rep.Stuck.Details)
	require.Zero(t, rep.Stuck.Lost+rep.Stuck.LostChanges, "nothing for an operator to decide")
	require.Equal(t, "cancelled", f.storeStatus(key))
	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status)
	require.Zero(t, f.reconcile().Stuck.ReleasesRecorded, "a second run changes nothing")
}

// TestOpsRestoreOfACancellationTheStoreLostWithItsBookingRecordsIt: the
// flag came from a view of the saga older than its cancel (visibility
// lags), and the store lost both. ops restore applies the cancellation
// again: there is nothing to release, so the store records it cancelled.
func TestOpsRestoreOfACancellationTheStoreLostWithItsBookingRecordsIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := f.booked(11)
	f.cancelThroughAPI(url, key)
	f.lose(key)

	f.restored(key, receipt.StatusCancelled)
	require.Equal(t, "cancelled", f.storeStatus(key))
}

// TestALostMoveIsAppliedAgainWithItsNewBooking: after a move, the store
// came back from a backup taken before it: the old booking confirmed, the
// new one unknown. ops restore on the old key restores the new booking,
// which releases the old one for the reschedule in the same commit: the
// old key answers rescheduled, as its caller heard, and the store agrees.
func TestALostMoveIsAppliedAgainWithItsNewBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	old, moved := f.lostMove(url, 9, 17)
	f.revive(old)
	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Lost, rep.Stuck.Details)
	require.Equal(t, 1, rep.Stuck.LostChanges, rep.Stuck.Details)

	f.restored(old, receipt.StatusRescheduled)
	require.Equal(t, "released_for_reschedule", f.storeStatus(old))
	require.Equal(t, "confirmed", f.storeStatus(moved))
	require.Equal(t, receipt.StatusRescheduled, f.answer(url, old).Status)
	require.Empty(t, f.openFlags())
}

// TestALostMoveWhoseNewSlotIsTakenStillLetsTheOldOneGo: the lost move's
// new slot was sold meanwhile, so its restore is refused. The old booking
// is still released for the reschedule, as its caller heard; the new
// key's refusal is what its caller is told.
func TestALostMoveWhoseNewSlotIsTakenStillLetsTheOldOneGo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	old, moved := f.lostMove(url, 10, 12)
	f.revive(old)
	f.takenMeanwhile(12)
	f.reconcile()

	f.restored(old, receipt.StatusRescheduled)
	require.Equal(t, "released_for_reschedule", f.storeStatus(old))
	require.Equal(t, receipt.StatusRescheduled, f.answer(url, old).Status)
	require.Equal(t, receipt.StatusConflict, f.answer(url, moved).Status, "the store decided the new key")
}

// TestALostMovesNewBookingComesBackWhenItsOldOneIsGoneToo: booked and
// moved after the backup, the store lost both sides. Reconciliation
// records the old one released for the reschedule; ops restore brings the
// new one back as a booking of its own, not refused for an old booking it
// can no longer release.
func TestALostMovesNewBookingComesBackWhenItsOldOneIsGoneToo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	old, moved := f.lostMove(url, 8, 18)
	f.lose(old)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.ReleasesRecorded, rep.Stuck.Details)
	require.Equal(t, 1, rep.Stuck.Lost, rep.Stuck.Details)
	require.Equal(t, "released_for_reschedule", f.storeStatus(old))
	f.restored(moved, receipt.StatusConfirmed)
	require.Equal(t, receipt.StatusRescheduled, f.answer(url, old).Status)
}

// TestALostHoldIsRestoredAsAHold: ops restore of a hold the store lost
// brings back a hold for what is left of it, never a booking nobody made.
func TestALostHoldIsRestoredAsAHold(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	var held api.IntentAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: "call-" + uuid.NewString(),
		Slot: edge.Slot{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: slot(t, 14).Format(time.RFC3339),
			TimeZone: "Europe/Paris", DurationMinutes: 30}, Hold: true, ExpectedPolicyVersion: policyVersion}, &held))
	require.NotNil(t, held.Hold)
	require.Equal(t, receipt.StatusHeld, held.Hold.Status)
	// Reconciliation finds live sagas through visibility, which the saga
	// updates after its answer: the hold is listed live before the store
	// loses it, as a hold of some seconds would be.
	inQueue := "TaskQueue = '" + f.queue + "' AND WorkflowId = '" + held.RequestKey + "' AND BookingStatus = 'SELECTED'"
	f.eventually(func() bool { return f.count(inQueue) == 1 }, "the hold listed live")
	f.lose(held.RequestKey)
	require.Equal(t, 1, f.reconcile().Stuck.Lost)

	f.restored(held.RequestKey, receipt.StatusHeld)
	require.Equal(t, "held", f.storeStatus(held.RequestKey))
	var expires time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT hold_expires_at FROM booking WHERE request_key = $1", held.RequestKey).Scan(&expires))
	require.False(t, expires.After(*held.Hold.HoldExpiresAt), "no longer than the hold it was: %s after %s", expires, held.Hold.HoldExpiresAt)
}
