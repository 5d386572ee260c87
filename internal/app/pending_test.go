package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// A key chosen to book whose saga has not started yet (its book is still
// on its way) holds the conversation and stays outstanding, though the
// store does not know it: a second book racing the first must not clear
// its mark for good.
func TestAKeyNotYetStartedStaysOutstanding(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := sagaclient.New(f.client, sagaclient.Options{Catalog: f.catalog, TaskQueue: f.queue, Settings: f.settings})
	conv := "call-" + uuid.NewString()
	first, err := sc.Choose(f.ctx, conv, commitRequest(slot(t, 10)).Intent, true)
	require.NoError(t, err)

	held, err := sc.Pending(f.ctx, conv, []string{first.RequestKey})
	require.NoError(t, err)
	require.NotNil(t, held, "a booking on its way holds the conversation")
	require.Equal(t, receipt.StatusPending, held.Status)
	next, err := sc.Choose(f.ctx, conv, commitRequest(slot(t, 11)).Intent, true)
	require.NoError(t, err)
	require.Equal(t, []string{first.RequestKey}, next.Outstanding, "still outstanding")
}

// POST /v1/intents keeps the same rule as the voice tools: while an
// earlier booking of the conversation is pending, a new choice, a hold
// above all, is refused with that booking's receipt, and nothing is held.
func TestAnIntentWaitsForTheConversationsPendingBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(api.Config{})
	sc := sagaclient.New(f.client, sagaclient.Options{Catalog: f.catalog, TaskQueue: f.queue, Settings: f.settings})
	conv := "call-" + uuid.NewString()
	first, err := sc.Choose(f.ctx, conv, commitRequest(slot(t, 10)).Intent, true) // booked by a tool, on its way

	require.NoError(t, err)
	for _, hold := range []bool{true, false} {
		var e api.Error
		require.Equal(t, http.StatusConflict, f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: conv,
			Slot: bookingBody("", slot(t, 11)).Slot, Hold: hold, ExpectedPolicyVersion: policyVersion}, &e), "hold %v", hold)
		require.Equal(t, "earlier_booking_pending", e.Code)
		require.Contains(t, e.Message, receipt.Reference(first.RequestKey))
	}
	require.Zero(t, f.bookings(), "nothing held")
}

// TestConcurrentBooksWaitForThePendingOne: the first book of a call goes
// pending (no worker takes its saga, as during a deploy); five books of
// other slots sent at once in the same call are each told to check it
// first, none is started, and the first stays outstanding after them.
func TestConcurrentBooksWaitForThePendingOne(t *testing.T) {
	t.Parallel()
	f := setup(t)
	queue := "no-sagas-" + uuid.NewString()
	w := worker.New(f.client, queue, worker.Options{})
	w.RegisterWorkflow(workflows.Conversation) // the call's key book, and no booking saga
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	sc := sagaclient.New(f.client, sagaclient.Options{Catalog: f.catalog, TaskQueue: queue, Settings: f.settings})
	srv := httptest.NewServer(api.New(sc, api.Config{RetellKey: "retell-key", Keys: apiKeys}).Handler())
	t.Cleanup(srv.Close)
	callID := "call-" + uuid.NewString()
	book := func(hour int) string {
		body, err := json.Marshal(bookArgs(t, hour))
		require.NoError(t, err)
		var out struct {
			Result string `json:"result"`
		}
		require.Equal(t, http.StatusOK, f.call("POST", srv.URL+"/v1/tools/retell/book", body, &out,
			"X-Retell-Signature", retellSign(body, "retell-key"), "X-Call-Id", callID))
		return out.Result
	}
	first := book(10)
	require.True(t, strings.HasPrefix(first, "[pending_reconciliation]"), first)

	results := make([]string, 5)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = book(11 + i) })
	}
	wg.Wait()
	for _, r := range results {
		require.Contains(t, r, "An earlier booking in this call is not settled", r)
	}
	var started int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking").Scan(&started))
	require.Zero(t, started)
	require.Contains(t, book(16), "An earlier booking in this call is not settled", "the first is still outstanding")
}
