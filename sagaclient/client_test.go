package sagaclient_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// One in-process Temporal server for the package's tests; each test has
// its own task queue.
var server = sync.OnceValue(func() *temporaltest.TestServer {
	return temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: zaplog.New(zap.NewNop())}))
})

// commitWait is the saga's default, so a call's budget is what a voice
// platform gets: the commit wait and the client's default margin (0.4 s).
const commitWait = 3 * time.Second

type fixture struct {
	ctx    context.Context
	tc     client.Client
	client *sagaclient.Client
	queue  string
}

// setup is a saga client on its own queue. Only the conversation's
// workflow is served there: no booking saga runs, as during a deploy.
func setup(t *testing.T) *fixture {
	t.Helper()
	tc := server().GetDefaultClient()
	f := &fixture{ctx: context.Background(), tc: tc, queue: "q-" + uuid.NewString()}
	w := worker.New(tc, f.queue, worker.Options{})
	w.RegisterWorkflow(workflows.Conversation)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	f.client = sagaclient.New(tc, sagaclient.Options{TaskQueue: f.queue, Settings: workflows.Settings{CommitWait: commitWait}})
	return f
}

func intent(hour int) booking.Intent {
	start := time.Date(2026, 12, 8, hour, 0, 0, 0, time.UTC)
	return booking.Intent{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: start, EndsAt: start.Add(30 * time.Minute),
		TimeZone: "Europe/Paris"}
}

// A booking call no worker takes answers pending_reconciliation within
// the commit wait and the margin, with its key and reference: it may have
// reached Temporal, so it is never a failure, and never late.
func TestABookingNoWorkerTakesIsPendingWithinItsBound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	began := time.Now()
	r, err := f.client.Commit(f.ctx, key, booking.CommitRequest{RequestKey: key, Intent: intent(10), ExpectedPolicyVersion: "p1"})
	took := time.Since(began)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, r.Status)
	require.Equal(t, key, r.RequestKey)
	require.Equal(t, receipt.Reference(key), r.Reference)
	require.Less(t, took, commitWait+time.Second, "answered within its bound: the commit wait and the margin")

	// Its status, asked again, is still pending: the saga exists, unsettled.
	again, err := f.client.Status(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, again.Status)
}

// Only the store can say a key was never booked: a client without its
// reads answers a key Temporal doesn't know as pending, never as absent
// or failed, and a read it can't do names what it lacks.
func TestWithoutTheStoreAnUnknownKeyIsNotCalledAbsent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	r, err := f.client.Status(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, r.Status)
	require.Equal(t, key, r.RequestKey)
}

// The conversation's bookkeeping: one key per choice, the same for a
// re-issued call, outstanding keys until settled, and a retired key
// replaced by a fresh one.
func TestAConversationKeepsOneKeyPerChoice(t *testing.T) {
	t.Parallel()
	f := setup(t)
	conv := "call-" + uuid.NewString()
	first, err := f.client.Choose(f.ctx, conv, intent(10), true)
	require.NoError(t, err)
	require.NotEmpty(t, first.RequestKey)
	require.Empty(t, first.Outstanding)
	again, err := f.client.Choose(f.ctx, conv, intent(10), true)
	require.NoError(t, err)
	require.Equal(t, first.RequestKey, again.RequestKey, "a re-issued call gets the same key")

	other, err := f.client.Choose(f.ctx, conv, intent(11), true)
	require.NoError(t, err)
	require.NotEqual(t, first.RequestKey, other.RequestKey)
	require.Equal(t, []string{first.RequestKey}, other.Outstanding, "the first booking is not known to be settled")

	made, err := f.client.Made(f.ctx, conv, first.RequestKey)
	require.NoError(t, err)
	require.True(t, made)
	made, err = f.client.Made(f.ctx, "call-"+uuid.NewString(), first.RequestKey)
	require.NoError(t, err)
	require.False(t, made, "another conversation did not make it")

	require.NoError(t, f.client.Settle(f.ctx, conv, first.RequestKey))
	third, err := f.client.Choose(f.ctx, conv, intent(12), true)
	require.NoError(t, err)
	require.Equal(t, []string{other.RequestKey}, third.Outstanding, "settled keys are no longer outstanding")

	require.NoError(t, f.client.Retire(f.ctx, conv, first.RequestKey))
	fresh, err := f.client.Choose(f.ctx, conv, intent(10), true)
	require.NoError(t, err)
	require.NotEqual(t, first.RequestKey, fresh.RequestKey, "a retired choice gets a fresh key")
	require.NoError(t, f.client.Retire(f.ctx, "call-"+uuid.NewString(), "k"), "a conversation that never was has nothing to forget")
}

// Pending finds the first outstanding key still pending, for the call to
// wait on, and leaves it outstanding.
func TestPendingHoldsTheConversationWhileABookingIsUnsettled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	conv := "call-" + uuid.NewString()
	ch, err := f.client.Choose(f.ctx, conv, intent(10), true)
	require.NoError(t, err)
	r, err := f.client.Commit(f.ctx, ch.RequestKey, booking.CommitRequest{RequestKey: ch.RequestKey, Intent: intent(10), ExpectedPolicyVersion: "p1"})
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, r.Status)

	held, err := f.client.Pending(f.ctx, conv, []string{ch.RequestKey})
	require.NoError(t, err)
	require.NotNil(t, held, "the pending booking holds the conversation")
	require.Equal(t, ch.RequestKey, held.RequestKey)
	require.Equal(t, receipt.StatusPending, held.Status)
	next, err := f.client.Choose(f.ctx, conv, intent(11), true)
	require.NoError(t, err)
	require.Equal(t, []string{ch.RequestKey}, next.Outstanding, "still outstanding: its outcome is not known")
}

// A choice without a conversation is refused, and nothing is started.
func TestAChoiceNeedsAConversation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.client.Choose(f.ctx, "", intent(10), true)
	var rej *booking.Rejection
	require.ErrorAs(t, err, &rej)
	require.Equal(t, booking.CodeMissingField, rej.Code)
}
