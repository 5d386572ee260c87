package systemtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The TestAPendingCall… tests share one fault: a booking call Temporal
// never got (the server died with it in flight), answered
// pending_reconciliation and noted as the API notes it, which only
// reconciliation's resend would ever decide. Until it does, every answer
// for the key is pending, with the reference the caller was given.

// setupUnsent is a fixture whose edge (REST and Retell, key
// "retell-key") drops booking calls while drop is set.
func setupUnsent(t *testing.T) (*fixture, string, *unsent) {
	t.Helper()
	f := setup(t)
	drop := &unsent{}
	url, _ := f.serveThrough(desk.Options{OnPending: app.NotePending(f.acts.Store, zap.NewNop())},
		voice.Config{RetellKey: "retell-key"}, drop)
	return f, url, drop
}

// bookUnsent books hour through REST with the call dropped, and returns
// the pending answer once it is noted.
func (f *fixture) bookUnsent(url string, drop *unsent, key string, hour int) receipt.Receipt {
	f.t.Helper()
	drop.drop.Store(true)
	defer drop.drop.Store(false)
	var r receipt.Receipt
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(f.t, hour)), &r))
	require.Equal(f.t, receipt.StatusPending, r.Status)
	f.eventually(func() bool { return f.pendingCalls() == 1 }, "the pending answer noted")
	return r
}

func TestAPendingCallIsReadAsPendingUntilItSettles(t *testing.T) {
	t.Parallel()
	f, url, drop := setupUnsent(t)
	key := uuid.NewString()
	first := f.bookUnsent(url, drop, key, 10)
	before := f.tableRows()

	read := f.answer(url, key)
	require.Equal(t, receipt.StatusPending, read.Status, "not found would tell the caller nothing is booked")
	require.Equal(t, first.Reference, read.Reference)
	var byRef receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings?reference="+first.Reference, nil, &byRef))
	require.Equal(t, receipt.StatusPending, byRef.Status)
	require.Equal(t, key, byRef.RequestKey)
	require.Equal(t, before, f.tableRows(), "a read adds nothing")

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Resent, "%v", rep.Stuck.Details)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, key).Status, "settled to the one outcome")
	require.Equal(t, 1, f.bookings())
	require.Zero(t, f.pendingCalls())
}

func TestAPendingCallHoldsTheVoiceCallThroughBookingStatus(t *testing.T) {
	t.Parallel()
	f, url, drop := setupUnsent(t)
	conv := "call-" + uuid.NewString()
	drop.drop.Store(true)
	first := f.retellTool(url, conv, "book", bookArgs(t, 10))
	drop.drop.Store(false)
	require.True(t, strings.HasPrefix(first, "[pending_reconciliation]"), first)
	f.eventually(func() bool { return f.pendingCalls() == 1 }, "the pending answer noted")
	var key string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT request_key FROM pending_call").Scan(&key))

	status := f.retellTool(url, conv, "booking_status", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(status, "[pending_reconciliation]"), status)
	next := f.retellTool(url, conv, "book", bookArgs(t, 12))
	require.Contains(t, next, "An earlier booking in this call is not settled", "the block stays: %s", next)
	require.Zero(t, f.bookings(), "nothing booked meanwhile")

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Resent, "%v", rep.Stuck.Details)
	settled := f.retellTool(url, conv, "booking_status", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(settled, "[confirmed]"), settled)
	require.Equal(t, 1, f.bookings(), "the one booking the caller was told is on its way")
}

// A caller who cancels a booking still pending is answered cancelled,
// and means it: the store records the cancel as its decision on the key,
// so reconciliation's resend finds the key decided and books nothing,
// and the caller is texted nothing.
func TestAPendingCallCancelledBooksNothing(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	drop := &unsent{}
	url, _ := f.serveThrough(desk.Options{OnPending: app.NotePending(f.acts.Store, zap.NewNop())}, voice.Config{}, drop)
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 10))
	body.Contact = &edge.Contact{Name: "Camille", Phone: "+33612345678", Notify: "sms", Language: "fr-FR"}
	drop.drop.Store(true)
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	drop.drop.Store(false)
	require.Equal(t, receipt.StatusPending, r.Status)
	f.eventually(func() bool { return f.pendingCalls() == 1 }, "the pending answer noted")

	var cancelled receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/cancel", nil, &cancelled))
	require.Equal(t, receipt.StatusCancelled, cancelled.Status)
	require.Equal(t, r.Reference, cancelled.Reference)
	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status)
	f.record(booking.ReleaseGoneIDPrefix+key, "release_gone_not_found")
	f.record(booking.WithdrawIDPrefix+key, "withdraw_pending_call")

	rep := f.reconcile()
	require.Zero(t, rep.Stuck.Resent, "the key is decided: nothing to send; %v", rep.Stuck.Details)
	require.Zero(t, f.pendingCalls(), "settled")
	require.Zero(t, f.bookings(), "no booking")
	require.Equal(t, receipt.StatusCancelled, f.answer(url, key).Status)

	// The caller's own retry of the book, with its key, books nothing either.
	var again receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &again))
	require.Equal(t, receipt.StatusCancelled, again.Status)
	require.Zero(t, f.bookings())
	require.Empty(t, fake.Sent(), "no text")
	require.Empty(t, f.messages(key))
}
