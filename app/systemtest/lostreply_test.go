package systemtest

import (
	"context"
	"errors"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// lostReply lets an Update-with-Start reach Temporal and complete there,
// then loses its answer on the way back to the API, as a dropped
// connection or a gateway timeout would.
type lostReply struct {
	interceptor.ClientInterceptorBase
	lose atomic.Bool
	lost atomic.Int32
}

func (l *lostReply) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return hooked(next, outbound{updateWithStart: func(ctx context.Context, in *interceptor.ClientUpdateWithStartWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error) {
		h, err := call()
		if err != nil || !strings.HasPrefix(in.UpdateOptions.UpdateName, "commit") || !l.lose.Load() {
			return h, err
		}
		if err := h.Get(ctx, nil); err != nil {
			return nil, err
		}
		l.lost.Add(1)
		return nil, serviceerror.NewUnavailable("injected: the answer from Temporal was lost")
	}})
}

func TestALostAnswerFromTemporalIsPendingNeverAFailure(t *testing.T) {
	t.Parallel()
	f := setup(t)
	fault := &lostReply{}
	url, sc := f.serveThrough(desk.Options{}, voice.Config{}, fault)
	fault.lose.Store(true)

	// The HTTP API.
	key := uuid.NewString()
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, 9)), &r))
	require.Equal(t, receipt.StatusPending, r.Status)
	require.Equal(t, receipt.Reference(key), r.Reference)

	// The Go client.
	goKey := uuid.NewString()
	gr, err := sc.Commit(f.ctx, goKey, commitRequest(slot(t, 10)))
	require.NoError(t, err, "an outcome that may have happened is a receipt, not an error")
	require.Equal(t, receipt.StatusPending, gr.Status)
	require.Equal(t, receipt.Reference(goKey), gr.Reference)

	// Retell and Vapi.
	out := f.retellTool(url, "call-"+uuid.NewString(), "book", bookArgs(t, 11))
	require.Contains(t, out, "NOT confirmed yet", out)
	require.Contains(t, out, "BS-", "the caller hears a reference")

	vapi := map[string]any{"message": map[string]any{"type": "tool-calls", "call": map[string]string{"id": "call-" + uuid.NewString()},
		"toolCalls": []map[string]any{{"id": "tc-1", "type": "function", "function": map[string]any{"name": "book", "arguments": bookArgs(t, 12)}}}}}
	var results struct {
		Results []struct {
			Result string `json:"result"`
		} `json:"results"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/tools/vapi", vapi, &results))
	require.Len(t, results.Results, 1)
	require.Contains(t, results.Results[0].Result, "NOT confirmed yet", results.Results[0].Result)

	require.EqualValues(t, 4, fault.lost.Load(), "each answer was lost after Temporal had it")
	// Each booking was in fact made, and reads confirmed.
	fault.lose.Store(false)
	for _, k := range []string{key, goKey} {
		require.Equal(t, receipt.StatusConfirmed, f.answer(url, k).Status)
	}
	require.Equal(t, 4, f.bookings())
}

func TestAPendingBookingHoldsTheConversation(t *testing.T) {
	t.Parallel()
	fault := &faults{}
	fault.stalled.Store(true)
	f := setup(t, worker.Options{Interceptors: []interceptor.WorkerInterceptor{fault}})
	// The API's own reads of the store fail while the worker is stalled.
	url := f.serveAPI(app.EdgeConfig{}, storeDown{Catalog: f.catalog, down: &fault.stalled})
	call := "call-" + uuid.NewString()
	book := func(hour int) string { return f.retellTool(url, call, "book", bookArgs(t, hour)) }
	// The first booking's reply is lost and the store can't be asked: pending.
	first := book(10)
	require.Contains(t, first, "NOT confirmed yet", first)
	require.True(t, fault.lost.Load())

	held := book(11)
	require.Contains(t, held, "NOT confirmed yet", "the caller hears the pending booking, not a new one: %s", held)
	require.Contains(t, held, "booking_status", held)
	require.Equal(t, 1, f.bookings(), "the second slot was not booked")

	fault.stalled.Store(false)
	f.eventually(func() bool {
		var r receipt.Receipt
		return f.call("GET", url+"/v1/bookings?reference="+referenceIn(t, first), nil, &r) == http.StatusOK &&
			r.Status == receipt.StatusConfirmed
	}, "the first booking settles, found by its reference")
	status := f.retellTool(url, call, "booking_status", map[string]any{"reference": referenceIn(t, first)})
	require.True(t, strings.HasPrefix(status, "[confirmed] Confirmed"), "the caller's reference resolves: %s", status)
	second := book(11)
	require.True(t, strings.HasPrefix(second, "[confirmed] Confirmed"), "the conversation goes on: %s", second)
	require.Equal(t, 2, f.bookings())
}

// storeDown is the catalogue with the store out of reach while down is
// set: what the store decided cannot be read.
type storeDown struct {
	desk.Catalog
	down *atomic.Bool
}

func (s storeDown) Decision(ctx context.Context, in booking.DecisionInput) (booking.LookupOutput, error) {
	if s.down.Load() {
		return booking.LookupOutput{}, errors.New("decision: store unreachable")
	}
	return s.Catalog.Decision(ctx, in)
}

// referenceIn finds the BS-XXXX-XXXX reference in a spoken line.
func referenceIn(t *testing.T, line string) string {
	t.Helper()
	i := strings.Index(line, "BS-")
	require.GreaterOrEqual(t, i, 0, line)
	return line[i : i+len("BS-XXXX-XXXX")]
}

// lostBookkeeping fails every update that tells a conversation how a
// booking came out (settle, retire), as a Temporal hiccup right after the
// booking call would.
type lostBookkeeping struct {
	interceptor.ClientInterceptorBase
	failed atomic.Int32
}

func (l *lostBookkeeping) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return hooked(next, outbound{update: func(_ context.Context, in *interceptor.ClientUpdateWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error) {
		if in.UpdateName == booking.UpdateSettle || in.UpdateName == booking.UpdateRetire {
			l.failed.Add(1)
			return nil, serviceerror.NewUnavailable("injected: the conversation could not be told")
		}
		return call()
	}})
}

// The caller hears what happened to the booking, whatever happens to the
// conversation's bookkeeping afterwards.
func TestAConversationBookkeepingFaultNeverChangesTheAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	fault := &lostBookkeeping{}
	url, _ := f.serveThrough(desk.Options{}, voice.Config{}, fault)
	call := "call-" + uuid.NewString()
	tool := func(name string, args map[string]any) string { return f.retellTool(url, call, name, args) }
	args := bookArgs(t, 13)
	booked := tool("book", args)
	require.True(t, strings.HasPrefix(booked, "[confirmed] Confirmed"), "the booking was made: %s", booked)

	var key string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT request_key FROM booking").Scan(&key))
	cancelled := tool("cancel_booking", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(cancelled, "[cancelled] Cancelled"), "the booking was cancelled: %s", cancelled)
	require.EqualValues(t, 2, fault.failed.Load(), "the bookkeeping failed both times")
}
