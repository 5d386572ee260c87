package systemtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// unsent drops booking calls (a commit, a hold, a move) before they reach
// Temporal, and answers as a server killed with the call in flight does:
// unavailable, which may have happened, so the API answers
// pending_reconciliation. A conversation's bookkeeping and a cancel go
// through.
type unsent struct {
	interceptor.ClientInterceptorBase
	drop    atomic.Bool
	dropped atomic.Int32
}

func (u *unsent) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return hooked(next, outbound{
		updateWithStart: func(_ context.Context, in *interceptor.ClientUpdateWithStartWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error) {
			return u.maybeDrop(in.UpdateOptions.UpdateName, call)
		},
		update: func(_ context.Context, in *interceptor.ClientUpdateWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error) {
			return u.maybeDrop(in.UpdateName, call)
		},
	})
}

// maybeDrop drops a booking call (update) while drop is set.
func (u *unsent) maybeDrop(update string, call updateCall) (client.WorkflowUpdateHandle, error) {
	switch update {
	case booking.UpdateCommit, booking.UpdateSelect, booking.UpdateReschedule:
		if u.drop.Load() {
			u.dropped.Add(1)
			return nil, serviceerror.NewUnavailable("injected: the server died with the call in flight")
		}
	}
	return call()
}

// serveThrough serves the edge through a Temporal client with faults in
// its way, and returns its URL and the saga client behind it.
func (f *fixture) serveThrough(opts desk.Options, tools voice.Config, faults ...interceptor.ClientInterceptor) (string, *desk.Desk) {
	f.t.Helper()
	tc, err := client.NewClientFromExisting(f.client, client.Options{Namespace: temporalServer().GetDefaultNamespace(), Interceptors: faults})
	require.NoError(f.t, err)
	opts.Sagas.TaskQueue, opts.Sagas.Settings = f.queue, f.settings
	if opts.Sagas.Contacts == nil {
		opts.Sagas.Contacts = store.New(f.pool, store.Config{})
	}
	sc := desk.New(tc, f.catalog, opts)
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}, Tools: tools}))
	f.t.Cleanup(srv.Close)
	return srv.URL, sc
}

// pendingCalls counts the calls answered pending the store still keeps.
func (f *fixture) pendingCalls() int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM pending_call").Scan(&n))
	return n
}

func TestAPendingCallTemporalNeverGotIsSentAgain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	drop, lose := &unsent{}, &lostReply{}
	url, _ := f.serveThrough(desk.Options{OnPending: app.NotePending(f.acts.Store, zap.NewNop())}, voice.Config{}, drop, lose)
	old := f.booked(9)

	// A booking and a move Temporal never got, and a booking it did get
	// whose answer was lost: each answered pending.
	drop.drop.Store(true)
	book, moved := uuid.NewString(), uuid.NewString()
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(book, slot(t, 10)), &r))
	require.Equal(t, receipt.StatusPending, r.Status)
	body := edge.RescheduleBody{NewRequestKey: moved, Slot: bookingBody(moved, slot(t, 11)).Slot, ExpectedPolicyVersion: policyVersion}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+old+"/reschedule", body, &r))
	require.Equal(t, receipt.StatusPending, r.Status)
	drop.drop.Store(false)
	lose.lose.Store(true)
	made := uuid.NewString()
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(made, slot(t, 12)), &r))
	require.Equal(t, receipt.StatusPending, r.Status)
	lose.lose.Store(false)
	require.EqualValues(t, 2, drop.dropped.Load())
	require.EqualValues(t, 1, lose.lost.Load())
	f.eventually(func() bool { return f.pendingCalls() == 3 }, "the three pending answers noted")

	// Nothing else would ever decide the first two: no saga, no row.
	_, err := f.client.DescribeWorkflowExecution(f.ctx, book, "")
	require.ErrorAs(t, err, new(*serviceerror.NotFound))
	require.Equal(t, 2, f.bookings(), "the booking moved, and the one whose answer was lost")

	rep := f.reconcile()
	require.Equal(t, 2, rep.Stuck.Resent, "sent again: the two Temporal never got; %v", rep.Stuck.Details)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, book).Status)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, moved).Status)
	require.Equal(t, receipt.StatusRescheduled, f.answer(url, old).Status)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, made).Status)
	require.Equal(t, 4, f.bookings(), "each once, the one moved kept as released: the one made was not made again")
	require.Zero(t, f.pendingCalls(), "all settled: %v", rep.Stuck.Details)
	require.Zero(t, f.reconcile().Stuck.Resent, "a second run sends nothing")
}
