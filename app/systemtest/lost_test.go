package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// lose removes every trace of key from the store, as a restore from a
// backup taken before its commit would; only retention may touch the
// event log, so the test speaks as retention for that.
func (f *fixture) lose(key string) {
	f.t.Helper()
	require.NoError(f.t, pgx.BeginFunc(f.ctx, f.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			"SET LOCAL bookingsaga.retention = 'on'",
			"DELETE FROM booking_event WHERE request_key = $1",
			"DELETE FROM booking_resource WHERE booking_id IN (SELECT booking_id FROM booking WHERE request_key = $1)",
			"DELETE FROM booking WHERE request_key = $1",
		} {
			args := []any{key}
			if q[0] == 'S' {
				args = nil
			}
			if _, err := tx.Exec(f.ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestABookingTheStoreLostIsFlaggedNotSpoken: the saga confirmed a
// booking the store then lost. A reconciliation run flags it for
// operators and keeps its calendar events (flagged too); the status the
// agent reads is no longer "confirmed", and the store still decides.
func TestABookingTheStoreLostIsFlaggedNotSpoken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, key := f.lostBooking(14)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Lost, rep.Stuck.Details)
	require.Equal(t, 2, rep.Calendar.Flagged, "its events, in the property's and the agent's calendars: %v", rep.Calendar.Details)
	require.Zero(t, rep.Calendar.Orphans, "no event deleted on the store's word alone")
	require.Equal(t, "confirmed", f.event(propertyCal, key).Status)
	require.Equal(t, "confirmed", f.event(agentCal, key).Status)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, fl := range flags {
		require.Equal(t, key, fl.RequestKey)
		kinds[fl.Kind]++
	}
	require.Equal(t, map[string]int{"store_lost_booking": 1, "unknown_calendar_event": 2}, kinds)
	require.Equal(t, 0, f.reconcile().Stuck.Lost, "flagged once")

	r := f.answer(url, key)
	require.Equal(t, receipt.StatusPending, r.Status, "never spoken as confirmed")
	require.Equal(t, receipt.Reference(key), r.Reference)
	var a struct {
		Flags []struct {
			Kind string `json:"kind"`
		} `json:"flags"`
	}
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Len(t, a.Flags, 3, "operators see it")
}

// TestALostBookingIsRestoredUnderItsKeyIfItsSlotIsFree: ops restore
// commits what the saga confirmed, under its original key and booking id,
// as a store decision like any commit: it wins only if the slot is still
// free. Restored, the booking answers confirmed again and its flags
// close; the slot taken meanwhile, the store refuses it and that is what
// the agent hears.
func TestALostBookingIsRestoredUnderItsKeyIfItsSlotIsFree(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	sc := f.sagas()
	kept, taken := f.booked(10), f.booked(11)
	var first receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+kept, nil, &first))
	f.lose(kept)
	f.lose(taken)
	// While the store did not know, someone else booked the second slot.
	// (Through the saga the kept calendar events would have refused it:
	// the calendar re-check sees them busy. Here its calendars were not
	// read, as when they do not answer in time.)
	f.takenMeanwhile(11)
	require.Equal(t, 2, f.reconcile().Stuck.Lost)

	r := f.restored(kept, receipt.StatusConfirmed)
	require.Equal(t, first.BookingID, r.BookingID, "under its original booking id: its calendar events are its own")
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, kept).Status)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	for _, fl := range flags {
		require.NotEqual(t, kept, fl.RequestKey, "the restored booking's flags are closed: %+v", fl)
	}

	r, err = sc.Restore(f.ctx, taken)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConflict, r.Status, "the store decides")
	require.Equal(t, receipt.StatusConflict, f.answer(url, taken).Status, "what the agent hears is the store's")
	_, err = sc.Restore(f.ctx, kept)
	require.NoError(t, err, "a second restore changes nothing")
}

// TestALostBookingReleasedIsAnsweredNotBooked: an operator who tells the
// caller releases the lost booking instead: the store records it as not
// booked, every answer says so, its flags close, and the next run removes
// its kept calendar events as those of a booking not confirmed.
func TestALostBookingReleasedIsAnsweredNotBooked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	sc := f.sagas()
	key := f.booked(12)
	f.lose(key)
	require.Equal(t, 1, f.reconcile().Stuck.Lost)

	r, err := sc.ReleaseLost(f.ctx, key, "caller told on 1 Dec, rebooked for Friday")
	require.NoError(t, err)
	require.Equal(t, receipt.StatusRejected, r.Status)
	require.Equal(t, "booking_lost", r.Reason.Code)
	require.Equal(t, receipt.StatusRejected, f.answer(url, key).Status, "never confirmed, never pending again")
	require.Empty(t, f.openFlags())

	rep := f.reconcile()
	require.Equal(t, 2, rep.Calendar.Orphans, rep.Calendar.Details)
	require.Equal(t, "cancelled", f.event(propertyCal, key).Status)
	require.Zero(t, rep.Stuck.Lost, "the store has decided the key now")
}

// TestACancellationTheStoreLostIsNotSpokenAsDone: a restore can lose a
// cancellation too, and the store then holds the booking live again.
// The saga says cancelled, the store confirmed: the answer is neither
// until an operator settles it, but pending with its reference.
func TestACancellationTheStoreLostIsNotSpokenAsDone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := f.booked(15)
	var r receipt.Receipt
	f.cancelThroughAPI(url, key)
	f.published(key)
	// The store comes back from a backup taken before the cancel.
	f.revive(key)
	r = f.answer(url, key)
	require.Equal(t, receipt.StatusPending, r.Status, "neither the saga's cancelled nor, to a caller who cancelled, the store's confirmed")
	require.Equal(t, receipt.Reference(key), r.Reference)

	// A run flags it, once; ops restore applies the cancellation again.
	require.Equal(t, 1, f.reconcile().Stuck.LostChanges)
	require.Zero(t, f.reconcile().Stuck.LostChanges, "flagged once")
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	require.Len(t, flags, 1)
	require.Equal(t, "store_lost_change", flags[0].Kind)
	sc := f.sagas()
	again, err := sc.Restore(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, again.Status)
	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status, "the store and the saga agree again")
	require.Empty(t, f.openFlags())
}

// TestAResentBookOfALostBookingIsNotConfirmed: after a restore lost a
// confirmed booking, the same book sent again (a backend's retry, a model
// re-issuing the call) is checked against the store as a status read is:
// it answers pending with its reference, never "confirmed" for a booking
// the store does not hold, through the saga client and POST /v1/bookings.
func TestAResentBookOfALostBookingIsNotConfirmed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, key := f.lostBooking(14)

	r, err := f.sagas().Commit(f.ctx, key, commitRequest(slot(t, 14)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, r.Status, "the saga client's answer to a re-sent commit")
	require.Equal(t, receipt.Reference(key), r.Reference)

	var again receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, 14)), &again))
	require.Equal(t, receipt.StatusPending, again.Status, "POST /v1/bookings re-sent")
	require.Zero(t, f.bookings(), "nothing booked by the answer")
}

// answer is what GET /v1/bookings/{key} tells an agent about key.
func (f *fixture) answer(url, key string) receipt.Receipt {
	f.t.Helper()
	var r receipt.Receipt
	require.Equal(f.t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key, nil, &r))
	return r
}

// openFlags is what operators are asked to look at now.
func (f *fixture) openFlags() []booking.Flag {
	f.t.Helper()
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(f.t, err)
	return flags
}

// takenMeanwhile books hour under another key straight in the store, as
// someone would while the store did not know of the booking there (its
// calendars unread, as when they do not answer in time).
func (f *fixture) takenMeanwhile(hour int) {
	f.t.Helper()
	other := commitRequest(slot(f.t, hour))
	other.RequestKey = uuid.NewString()
	_, err := f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: other, CalendarUnchecked: true})
	require.NoError(f.t, err)
}

// lostBooking serves the API and books a slot at hour that the store then
// loses, as a restore from an older backup would.
func (f *fixture) lostBooking(hour int) (url, key string) {
	f.t.Helper()
	url, key = f.serveAPI(app.EdgeConfig{}), f.booked(hour)
	f.lose(key)
	return url, key
}

// A store restored or failed over behind Temporal may hold a booking its
// saga still calls confirmed as cancelled (DLM6): the answer is the
// store's, by its status as by its time, never the saga's "confirmed".
func TestASagaStillConfirmedIsAnsweredAsTheStoreHoldsIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := f.booked(10)
	_, err := f.pool.Exec(f.ctx, `
WITH b AS (UPDATE booking SET status = 'cancelled', released_at = now() WHERE request_key = $1 RETURNING booking_id)
UPDATE booking_resource SET live = false WHERE booking_id IN (SELECT booking_id FROM b)`, key)
	require.NoError(t, err)
	q, err := f.client.QueryWorkflow(f.ctx, key, "", booking.QueryReceipt, nil)
	require.NoError(t, err)
	var saga receipt.Receipt
	require.NoError(t, q.Get(&saga))
	require.Equal(t, receipt.StatusConfirmed, saga.Status, "the saga still says confirmed")

	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status)
}
