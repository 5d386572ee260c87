package activities_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/egress"
)

// A dispatcher heartbeats as it delivers, not only while it waits: a
// backlog or a slow receiver would otherwise outlast the heartbeat
// timeout, and Temporal would run the batch again beside the attempt
// still posting it (the same webhook-id twice).
func TestTheWebhookDispatcherHeartbeatsAsItDelivers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var received atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { received.Add(1) }))
	t.Cleanup(rcv.Close)
	f.acts.Egress = &egress.Guard{AllowLoopback: true}
	ctx := t.Context()
	_, _, err := f.acts.Store.PutEndpoint(ctx, "crm", rcv.URL)
	require.NoError(t, err)
	for i := range 3 {
		_, _, err := f.acts.Store.RequestHandoff(ctx, booking.Handoff{ConversationID: fmt.Sprint("c-", i), Topic: "advice", Reason: "a question"})
		require.NoError(t, err)
	}
	var beats atomic.Int32
	f.env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	v, err := f.env.ExecuteActivity(f.acts.DeliverWebhooks, booking.WebhookInput{EndpointID: "crm"})
	require.NoError(t, err)
	var out booking.CountOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, 3, out.Count)
	require.Equal(t, int32(3), received.Load())
	require.Positive(t, beats.Load(), "heartbeats while delivering (the SDK throttles them to one per interval)")
}
