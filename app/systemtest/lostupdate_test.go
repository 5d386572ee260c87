package systemtest

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// TestASagaWhoseUpdateTemporalLostAnswersTheStoresBooking: Temporal keeps
// an update it has admitted but no worker has accepted in memory only. A
// server killed then (the fault suite's kill -9) loses the agent's commit,
// while the local activity it started has already booked the key: the
// saga is left offered, with no request, over a booking in the store. The
// answer for the key is the store's, and the saga adopts it and mirrors
// it, rather than answering offered and then expired.
func TestASagaWhoseUpdateTemporalLostAnswersTheStoresBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key, req := uuid.NewString(), commitRequest(slot(t, 15))
	settings := f.settings
	settings.IntentTTL = 5 * time.Second
	// What the server kept of the agent's update with start: the start.
	_, err := f.client.ExecuteWorkflow(f.ctx, sagaclient.StartOptions(f.ctx, key, f.queue), booking.BookingWorkflowName,
		workflows.BookingInput{RequestKey: key, Settings: settings})
	require.NoError(t, err)
	// What the store kept: the commit its local activity made.
	in := booking.CommitInput{CommitRequest: req, Attempt: 1}
	in.RequestKey = key
	_, err = f.acts.Commit(f.ctx, in)
	require.NoError(t, err)

	r, err := f.sagas().Status(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, r.Status, "the store booked the key")
	f.eventually(func() bool { return f.synced(key) }, "the saga took the store's booking and mirrored it")
	require.Equal(t, workflows.StateConfirmed, f.state(key).State)
	f.record(key, "offered_over_a_stored_booking")
}

// TestAPendingCallWhoseUpdateTemporalLostIsSentAgain: the agent's call was
// answered pending_reconciliation, and Temporal kept its start but lost
// its update. The saga is offered and the store has nothing: the key
// stays pending (the caller holds its reference), and reconciliation,
// finding it authoritatively absent and its saga never sent it, sends it
// again with its key.
func TestAPendingCallWhoseUpdateTemporalLostIsSentAgain(t *testing.T) {
	t.Parallel()
	f, url, drop := setupUnsent(t)
	key := uuid.NewString()
	first := f.bookUnsent(url, drop, key, 10)
	_, err := f.client.ExecuteWorkflow(f.ctx, sagaclient.StartOptions(f.ctx, key, f.queue), booking.BookingWorkflowName,
		workflows.BookingInput{RequestKey: key, Settings: f.settings})
	require.NoError(t, err)

	read := f.answer(url, key)
	require.Equal(t, receipt.StatusPending, read.Status, "the caller was told pending; offered would take it back")
	require.Equal(t, first.Reference, read.Reference)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Resent, "%v", rep.Stuck.Details)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, key).Status)
	require.Equal(t, 1, f.bookings())
	require.Zero(t, f.pendingCalls())
}
