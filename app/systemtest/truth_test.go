package systemtest

import (
	"context"
	"errors"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// forget removes a key's saga from Temporal, as retention (or a namespace
// reset) would: terminated if it still runs, then deleted.
func (f *fixture) forget(key string) {
	f.t.Helper()
	err := f.client.TerminateWorkflow(f.ctx, key, "", "the test stands in for retention")
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) && !strings.Contains(err.Error(), "already completed") {
		require.NoError(f.t, err)
	}
	_, err = f.client.WorkflowService().DeleteWorkflowExecution(f.ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: temporalServer().GetDefaultNamespace(), WorkflowExecution: &common.WorkflowExecution{WorkflowId: key}})
	require.NoError(f.t, err)
	f.eventually(func() bool {
		_, err := f.client.DescribeWorkflowExecution(f.ctx, key, "")
		return errors.As(err, &nf)
	}, "the saga is gone")
}

func (f *fixture) bookingsFor(key string) int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking WHERE request_key = $1", key).Scan(&n))
	return n
}

func TestAConflictKeepsItsAnswerAfterRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	winner, loser := uuid.NewString(), uuid.NewString()
	req := commitRequest(slot(t, 10))
	require.Equal(t, receipt.StatusConfirmed, f.commit(winner, req).Status)
	first := f.commit(loser, req)
	require.Equal(t, receipt.StatusConflict, first.Status)

	f.forget(loser)
	_, err := f.saga().Cancel(f.ctx, winner)
	require.NoError(t, err)
	again := f.commit(loser, req)
	require.Equal(t, receipt.StatusConflict, again.Status, "the slot is free now, but this key was decided")
	require.Equal(t, first.Reason.Code, again.Reason.Code)
	require.Zero(t, f.bookingsFor(loser), "no booking under a key answered conflict")
}

func TestARejectionKeepsItsAnswerAfterRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	stale := commitRequest(slot(t, 11))
	stale.ExpectedPolicyVersion = "an-older-policy"
	first := f.commit(key, stale)
	require.Equal(t, receipt.StatusRejected, first.Status)
	require.Equal(t, "policy_version_changed", first.Reason.Code)
	f.record(key, "rejected_stale_policy")

	f.forget(key)
	again := f.commit(key, commitRequest(slot(t, 11))) // the agent refreshed the version, same key
	require.Equal(t, receipt.StatusRejected, again.Status, "a new decision needs a new key")
	require.Equal(t, "policy_version_changed", again.Reason.Code)
	require.Zero(t, f.bookingsFor(key))
}

func TestAnExpiredHoldKeepsItsAnswerAfterRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.pool.Exec(f.ctx, "UPDATE policy SET hold_ttl_seconds = 1 WHERE is_current")
	require.NoError(t, err)
	key, req := uuid.NewString(), commitRequest(slot(t, 12))
	req.Hold = true
	held, err := f.saga().Hold(f.ctx, key, req)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusHeld, held.Status)
	f.eventually(func() bool { return f.state(key).State == workflows.StateExpired }, "the hold ran out")

	f.forget(key)
	again := f.commit(key, commitRequest(slot(t, 12)))
	require.Equal(t, receipt.StatusExpired, again.Status)
	var live int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking WHERE status IN ('held', 'confirmed')").Scan(&live))
	require.Zero(t, live)
}

func TestStatusComesFromTheStoreOnceTheSagaIsGone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	booked := f.commit(key, commitRequest(slot(t, 13)))
	require.Equal(t, receipt.StatusConfirmed, booked.Status)
	require.Equal(t, gcal.EventID(key), booked.ProviderEventID, "the first receipt names the calendar event, derived from the key")
	f.forget(key)

	got := f.answer(url, key)
	require.Equal(t, receipt.StatusConfirmed, got.Status)
	require.Equal(t, booked.BookingID, got.BookingID)
	require.Equal(t, booked.StartsAt.UTC(), got.StartsAt.UTC())
	require.Equal(t, booked.ProviderEventID, got.ProviderEventID)
	require.Equal(t, booked.StartsAt.In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04"), got.LocalStart,
		"the wall time as requests give it, whoever answered")
	var byRef receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings?reference="+receipt.Reference(key), nil, &byRef))
	require.Equal(t, got, byRef)

	// A reschedule the store refused: its key reads 200 with its receipt.
	newKey := uuid.NewString()
	var refused edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("POST", url+"/v1/bookings/"+key+"/reschedule",
		edge.RescheduleBody{NewRequestKey: newKey, ExpectedPolicyVersion: policyVersion, Slot: edge.Slot{PropertyID: "atlantis-1",
			AgentID: "agent-00", StartsAt: slot(t, 14).Format(time.RFC3339), TimeZone: "Europe/Paris", DurationMinutes: 30}}, &refused))
	status := f.answer(url, newKey)
	require.Equal(t, receipt.StatusRejected, status.Status)
	require.Equal(t, refused.Code, status.Reason.Code)
}

func TestARescheduleWhoseReplacementIsCancelledMidCommit(t *testing.T) {
	t.Parallel()
	slow := &faults{}
	f := setup(t, worker.Options{Interceptors: []interceptor.WorkerInterceptor{slow}})
	f.settings.CommitWait = time.Second
	oldKey, newKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 10))).Status)

	// The move's commit lands in the store (releasing the old booking),
	// but its answer is late and the store can't be asked for a while:
	// the new booking sits in UNKNOWN when the caller cancels it.
	slow.delayCommit.Store(int64(2 * time.Second))
	slow.stalled.Store(true)
	moved, err := f.saga().Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 15)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, moved.Status)
	f.eventually(func() bool { return f.state(newKey).State == workflows.StateUnknown }, "the move's outcome is unknown")
	cancelled, err := f.saga().Cancel(f.ctx, newKey)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, cancelled.Status, "the cancel waits for the outcome")
	slow.stalled.Store(false)
	f.eventually(func() bool {
		r, err := f.saga().Receipt(f.ctx, newKey)
		return err == nil && r.Status == receipt.StatusCancelled
	}, "the replacement ends cancelled")

	f.eventually(func() bool {
		r, err := f.saga().Receipt(f.ctx, oldKey)
		return err == nil && r.Status != receipt.StatusConfirmed
	}, "the old booking no longer reads confirmed")
	old, err := f.saga().Receipt(f.ctx, oldKey)
	require.NoError(t, err)
	var status string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT status FROM booking WHERE request_key = $1", oldKey).Scan(&status))
	// The move's commit released the old booking in the same transaction
	// that booked the new one; cancelling the new one releases only it.
	require.Equal(t, "released_for_reschedule", status)
	require.Equal(t, receipt.StatusRescheduled, old.Status, "the receipt says what the store holds")
}

func TestACancelAndTwoReschedulesAtOnceKeepTheirAnswers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	oldKey := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 10))).Status)
	keyB, keyC := uuid.NewString(), uuid.NewString()
	sc := f.sagas()
	calls := []func() (receipt.Receipt, error){
		func() (receipt.Receipt, error) { return sc.Cancel(f.ctx, oldKey) },
		func() (receipt.Receipt, error) { return sc.Reschedule(f.ctx, oldKey, keyB, commitRequest(slot(t, 11))) },
		func() (receipt.Receipt, error) { return sc.Reschedule(f.ctx, oldKey, keyC, commitRequest(slot(t, 12))) },
	}
	send := func() []receipt.Receipt {
		out := make([]receipt.Receipt, len(calls))
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Go(func() {
				r, err := call()
				require.NoError(t, err)
				out[i] = r
			})
		}
		wg.Wait()
		return out
	}
	first := send()
	for i := range first {
		require.NotEqual(t, receipt.StatusPending, first[i].Status, "call %d is decided within the wait", i)
	}
	// The resends come once the dust has settled: the booking was
	// cancelled or moved, and its saga has closed.
	require.NoError(t, f.client.GetWorkflow(f.ctx, oldKey, "").Get(f.ctx, nil))
	again := send()
	for i := range first {
		require.Equal(t, first[i].Status, again[i].Status, "call %d: a resend gets the first answer", i)
		require.Equal(t, reasonCode(first[i]), reasonCode(again[i]), "call %d", i)
	}
	var live int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking WHERE status = 'confirmed' AND request_key = ANY($1)",
		[]string{oldKey, keyB, keyC}).Scan(&live))
	var oldStatus string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT status FROM booking WHERE request_key = $1", oldKey).Scan(&oldStatus))
	if oldStatus == "cancelled" {
		require.Zero(t, live, "the cancel came first: neither move happened")
	} else {
		require.Equal(t, 1, live, "never both, never neither")
	}
}

func reasonCode(r receipt.Receipt) string {
	if r.Reason == nil {
		return ""
	}
	return r.Reason.Code
}

// TestAFreeBusyThatHangsDoesNotHoldTheCommit: the calendar re-check has a
// small budget of its own; past it the store decides alone, and the
// booking is flagged for reconciliation to compare.
func TestAFreeBusyThatHangsDoesNotHoldTheCommit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.calendar.Inject(fakeserver.Fault{Op: "freebusy.query", Latency: 10 * time.Second}))
	key := uuid.NewString()
	start := time.Now()
	r := f.commit(key, commitRequest(slot(t, 10)))
	require.Equal(t, receipt.StatusConfirmed, r.Status, "the store decided")
	require.Less(t, time.Since(start), 3*time.Second, "within the commit wait")
	var flagged int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_event WHERE request_key = $1 AND kind = 'calendar_unchecked'",
		key).Scan(&flagged))
	require.Equal(t, 1, flagged, "flagged for reconciliation")
}

// TestACommitHeldOnARowLockIsCancelledOnTheServer: a commit waiting on a
// lock past its attempt's budget does not commit later behind the saga's
// back.
func TestACommitHeldOnARowLockIsCancelledOnTheServer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.settings.CommitWait = time.Second
	tx, err := f.pool.Begin(f.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(f.ctx, "SELECT FROM resource WHERE resource_id = 'paris-11' FOR UPDATE")
	require.NoError(t, err)

	key := uuid.NewString()
	r := f.commit(key, commitRequest(slot(t, 10)))
	require.Equal(t, receipt.StatusPending, r.Status)
	f.eventually(func() bool {
		var waiting int
		err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%booking%'`).Scan(&waiting)
		return err == nil && waiting == 0
	}, "no commit statement waits on the lock past its budget")
	require.NoError(t, tx.Rollback(f.ctx))
	f.eventually(func() bool {
		r, err := f.saga().Receipt(f.ctx, key)
		return err == nil && r.Status == receipt.StatusConfirmed
	}, "the saga retried with the same key once the store answered")
	require.Equal(t, 1, f.bookingsFor(key))
}

// TestReconcileTellsAnOpenSagaTheStoresAnswer: the store changed behind
// the saga's back (an operator's hand in the database, say); a
// reconciliation run finds the saga still answering confirmed and has it
// adopt the store's answer.
func TestReconcileTellsAnOpenSagaTheStoresAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(t, 16))).Status)
	f.eventually(func() bool { return f.synced(key) }, "the saga published its answer")
	_, err := f.pool.Exec(f.ctx, `WITH b AS (UPDATE booking SET status = 'cancelled', released_at = now() WHERE request_key = $1 RETURNING booking_id)
		UPDATE booking_resource SET live = false WHERE booking_id IN (SELECT booking_id FROM b)`, key)
	require.NoError(t, err)

	f.eventually(func() bool { return f.reconcile().Stuck.Drifted == 1 }, "a run finds the saga contradicting the store")
	f.eventually(func() bool {
		r, err := f.saga().Receipt(f.ctx, key)
		return err == nil && r.Status == receipt.StatusCancelled
	}, "the saga answers what the store holds")
}

// A hold placed through the API holds the slot against a competitor, and
// book confirms it.
func TestAHoldThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	slotBody := edge.Slot{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: slot(t, 15).Format(time.RFC3339),
		TimeZone: "Europe/Paris", DurationMinutes: 30}
	var held api.IntentAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: "call-" + uuid.NewString(),
		Slot: slotBody, Hold: true, ExpectedPolicyVersion: policyVersion}, &held))
	require.NotNil(t, held.Hold)
	require.Equal(t, receipt.StatusHeld, held.Hold.Status)
	require.NotNil(t, held.Hold.HoldExpiresAt)

	var rival receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(uuid.NewString(), slot(t, 15)), &rival))
	require.Equal(t, receipt.StatusConflict, rival.Status, "the hold counts against capacity")

	var booked receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(held.RequestKey, slot(t, 15)), &booked))
	require.Equal(t, receipt.StatusConfirmed, booked.Status, "book confirms the hold")
	require.Equal(t, held.Hold.BookingID, booked.BookingID)
	f.record(held.RequestKey, "held_then_confirmed")
}

// A resent reschedule answers what its new booking is now: once cancelled,
// never the confirmation the first send heard.
func TestARescheduleResendReadsTheNewBookingAsItIsNow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := f.sagas()
	oldKey, newKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 10))).Status)
	moved, err := sc.Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, moved.Status)
	cancelled, err := sc.Cancel(f.ctx, newKey)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, cancelled.Status)

	again, err := sc.Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, again.Status, "the store has the new booking cancelled")
	require.Equal(t, moved.BookingID, again.BookingID)
}

// A status read whose saga can't answer (no worker polls its queue, as
// while the workers restart) answers from the store, which holds every
// decision; before, it answered pending_reconciliation for keys long
// decided (the 30-minute fault run's last four violations).
func TestAStatusTheSagaCannotAnswerComesFromTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitRequest(slot(t, 14))
	winner, loser := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(winner, req).Status)
	require.Equal(t, receipt.StatusConflict, f.commit(loser, req).Status)

	// The store is read in the caller's process; no worker polls the queue.
	f.worker.Stop()
	sc := f.sagas()

	for key, want := range map[string]receipt.Status{winner: receipt.StatusConfirmed, loser: receipt.StatusConflict} {
		r, err := sc.Status(f.ctx, key)
		require.NoError(t, err)
		require.Equal(t, want, r.Status, key)
	}
}

// A choice the conversation can't take in time (no worker serves it, as
// during a deploy) fails within a booking call's budget, not the caller's
// whole timeout: a hold is a choice and a commit, and both must fit in
// what a voice platform waits.
func TestAChoiceNobodyTakesFailsWithinTheBudget(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: "nobody-polls-" + uuid.NewString(), Settings: f.settings}})
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := sc.Choose(ctx, "conv-"+uuid.NewString(), commitRequest(slot(t, 10)).Intent, false)
	require.Error(t, err)
	require.Less(t, time.Since(start), 2*(f.settings.WithDefaults().CommitWait+time.Second), "the choice waited past its budget")
}

// TestACancelWhoseSagaTemporalLostCancelsInTheStore: with the saga gone
// from Temporal (a namespace restored without it, say), a cancel
// releases the booking in the store, under its locks, and answers what
// the store then holds; the slot is free again.
func TestACancelWhoseSagaTemporalLostCancelsInTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(t, 12))).Status)
	f.forget(key)

	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/cancel", nil, &r))
	require.Equal(t, receipt.StatusCancelled, r.Status, "the store's outcome")
	f.record(booking.ReleaseGoneIDPrefix+key, "release_gone_cancelled")
	b, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, booking.StatusCancelled, b.Status)
	require.Equal(t, receipt.StatusConfirmed, f.commit(uuid.NewString(), commitRequest(slot(t, 12))).Status, "the slot is free")
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/cancel", nil, &r), "a resent cancel")
	require.Equal(t, receipt.StatusCancelled, r.Status)
}
