package systemtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

func TestFiveDuplicateCommitsMakeOneBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key, req := uuid.NewString(), commitRequest(slot(t, 10))
	got := make([]receipt.Receipt, 5)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = f.commit(key, req) })
	}
	wg.Wait()
	for _, r := range got {
		r.ProviderEventID = got[0].ProviderEventID // a late duplicate may already see the event id
		require.Equal(t, got[0], r)
	}
	require.Equal(t, receipt.StatusConfirmed, got[0].Status)
	require.Equal(t, 1, f.bookings())
	f.eventually(func() bool { return f.synced(key) }, "mirrors synced")
	require.Equal(t, 1, f.liveEvents("paris-11@calendar.test"))
	require.Len(t, f.crm.Records(), 1)
	f.record(key, "confirmed_and_mirrored")
}

func TestTwentyKeysRaceForOneSlot(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitRequest(slot(t, 11))
	got := make([]receipt.Receipt, 20)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = f.commit(uuid.NewString(), req) })
	}
	wg.Wait()
	// On a loaded machine an answer may outlast the commit wait: it is
	// pending, honestly, and its saga settles it. Exactly one key wins.
	count := map[receipt.Status]int{}
	for _, r := range got {
		if r.Status == receipt.StatusPending {
			f.eventually(func() bool {
				s, err := f.saga().Receipt(f.ctx, r.RequestKey)
				if err == nil && s.Status != receipt.StatusPending {
					r = s
				}
				return r.Status != receipt.StatusPending
			}, "a pending answer settles")
		}
		count[r.Status]++
	}
	require.Equal(t, map[receipt.Status]int{receipt.StatusConfirmed: 1, receipt.StatusConflict: 19}, count)
	require.Equal(t, 1, f.bookings())
}

// faults loses the first Commit's reply after the commit ran, as a worker
// crash or a network drop right after the database commit would; while
// stalled is set it also fails every read of the store (Lookup,
// Decision), so a saga sits in UNKNOWN.
// delayCommit, when set, holds the reply of the next Commit that long
// after the commit ran (a slow network back from the database).
type faults struct {
	interceptor.WorkerInterceptorBase
	lost, stalled atomic.Bool
	delayCommit   atomic.Int64
}

func (f *faults) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &faultsActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, root: f}
}

type faultsActivity struct {
	interceptor.ActivityInboundInterceptorBase
	root *faults
}

func (a *faultsActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	switch name := activity.GetInfo(ctx).ActivityType.Name; {
	case (name == "Lookup" || name == "Decision") && a.root.stalled.Load():
		return nil, errors.New("injected: the store does not answer this worker")
	case name == "Commit" && a.root.delayCommit.Load() > 0:
		out, err := a.Next.ExecuteActivity(ctx, in)
		time.Sleep(time.Duration(a.root.delayCommit.Swap(0)))
		return out, err
	case name == "Commit":
		out, err := a.Next.ExecuteActivity(ctx, in)
		if err == nil && a.root.lost.CompareAndSwap(false, true) {
			return nil, errors.New("injected: reply lost after the commit")
		}
		return out, err
	}
	return a.Next.ExecuteActivity(ctx, in)
}

func TestCommitReplyLostStillConfirmsOnce(t *testing.T) {
	t.Parallel()
	lose := &faults{}
	f := setup(t, worker.Options{Interceptors: []interceptor.WorkerInterceptor{lose}})
	key := uuid.NewString()
	r := f.commit(key, commitRequest(slot(t, 12)))
	require.True(t, lose.lost.Load(), "the fault fired")
	require.Equal(t, receipt.StatusConfirmed, r.Status, "found by lookup, not guessed")
	require.Equal(t, 1, f.bookings())
	st := f.state(key)
	require.Equal(t, 1, st.CommitAttempts, "the lookup found it; no second commit was needed")
	f.record(key, "commit_reply_lost")
}

func TestWorkerRestartMidSagaFinishesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	f := setup(t, worker.Options{WorkerStopTimeout: 0})
	// The first calendar write stalls, and the worker dies during it.
	require.NoError(t, f.calendar.Inject(fakeserver.Fault{Op: "events.insert", Times: 1, Latency: f.settings.MirrorAttemptTimeout * 10}))
	first := f.startWorkerAlone()
	key := uuid.NewString()
	r := f.commit(key, commitRequest(slot(t, 13)))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	f.eventually(func() bool { return f.calendar.Calls("events.insert") >= 1 }, "the calendar write started")
	first.Stop()
	f.startWorker(worker.Options{})
	f.eventually(func() bool { return f.synced(key) }, "the saga finished on the new worker")
	require.Equal(t, 1, f.liveEvents("paris-11@calendar.test"))
	require.Equal(t, 1, f.liveEvents("agent-00@calendar.test"))
	require.Equal(t, 1, f.bookings())
}

// startWorkerAlone stops the fixture's default worker and starts one the
// test controls.
func (f *fixture) startWorkerAlone() worker.Worker {
	f.queue = fmt.Sprintf("%s-alone", f.queue)
	return f.startWorker(worker.Options{WorkerStopTimeout: 0})
}

func TestSameKeyAfterCloseGetsTheOriginalReceipt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key, req := uuid.NewString(), commitRequest(slot(t, 14))
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, req).Status)
	cancelled, err := f.saga().Cancel(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, cancelled.Status)
	run := f.client.GetWorkflow(f.ctx, key, "")
	require.NoError(t, run.Get(f.ctx, nil), "the saga closed after the cancel was mirrored")

	again := f.commit(key, req)
	require.Equal(t, receipt.StatusCancelled, again.Status)
	require.Equal(t, cancelled.BookingID, again.BookingID)
	require.Equal(t, 1, f.bookings(), "no second booking")
	other := f.commit(key, commitRequest(slot(t, 15)))
	require.Equal(t, receipt.StatusRejected, other.Status)
	require.Equal(t, "request_key_reused", other.Reason.Code)
	f.record(key, "cancelled")
}

func TestRescheduleBooksNewThenReleasesOld(t *testing.T) {
	t.Parallel()
	f := setup(t)
	oldKey, newKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 16))).Status)
	taken := f.commit(uuid.NewString(), commitRequest(slot(t, 17)))
	require.Equal(t, receipt.StatusConfirmed, taken.Status)

	refused, err := f.saga().Reschedule(f.ctx, oldKey, uuid.NewString(), commitRequest(slot(t, 17)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConflict, refused.Status)
	require.Equal(t, workflows.StateConfirmed, f.state(oldKey).State, "a conflict leaves the old booking")

	moved, err := f.saga().Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 18)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, moved.Status)
	require.Equal(t, oldKey, moved.Replaces)
	again := f.commit(newKey, commitRequest(slot(t, 18)))
	require.Equal(t, receipt.StatusConfirmed, again.Status, "the agent re-sending the new slot under the new key is a retry, not a reuse")
	require.Equal(t, moved.BookingID, again.BookingID)
	require.NoError(t, f.client.GetWorkflow(f.ctx, oldKey, "").Get(f.ctx, nil), "the old saga closed once released")
	old, err := f.saga().Receipt(f.ctx, oldKey)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusRescheduled, old.Status)
	require.Equal(t, newKey, old.ReplacedBy)
	var live int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking WHERE status = 'confirmed'").Scan(&live))
	require.Equal(t, 2, live, "the new booking and the one that blocked the first try")
	f.record(oldKey, "rescheduled")
	f.record(newKey, "rescheduled_new_booking")
}

func TestRescheduleToAnOverlappingSlot(t *testing.T) {
	t.Parallel()
	f := setup(t)
	oldKey, newKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 16))).Status)
	f.eventually(func() bool { return f.synced(oldKey) }, "the old booking is in the calendars")

	// "Can we make it a quarter of an hour later?": the same property and
	// agent, overlapping the old slot and its calendar events.
	moved, err := f.saga().Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 16).Add(15*time.Minute)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, moved.Status, "%+v", moved.Reason)
	require.NoError(t, f.client.GetWorkflow(f.ctx, oldKey, "").Get(f.ctx, nil))
	f.eventually(func() bool { return f.synced(newKey) }, "the new booking is in the calendars")
	require.Equal(t, 1, f.liveEvents("paris-11@calendar.test"), "the old event went, the new one came")
}

// TestAMoveOfAClosedBookingIsRefused: a caller who never heard their
// cancel's answer asks to move the booking afterwards. Its saga has
// closed, so the new booking's saga starts naming it, and the store
// refuses: the booking is cancelled. The move must never become a booking
// of its own, with no link to the caller it was made for.
func TestAMoveOfAClosedBookingIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	oldKey, newKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(oldKey, commitRequest(slot(t, 11))).Status)
	sc := f.sagas()
	cancelled, err := sc.Cancel(f.ctx, oldKey)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, cancelled.Status)
	require.NoError(t, f.client.GetWorkflow(f.ctx, oldKey, "").Get(f.ctx, nil), "the saga closed after the cancel was mirrored")

	moved, err := sc.Reschedule(f.ctx, oldKey, newKey, commitRequest(slot(t, 12)))
	require.NoError(t, err)
	f.record(newKey, "move_of_a_closed_booking")
	require.Equal(t, receipt.StatusRejected, moved.Status, "a cancelled booking can't be moved")
	require.Equal(t, string(booking.CodeInvalidReplacement), moved.Reason.Code)
	require.Equal(t, 1, f.bookings(), "the move booked nothing")
}
