package systemtest

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/jackc/pgx/v5"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/store"
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
	sc := f.sagas()
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
	url := f.serveAPI(app.EdgeConfig{})
	sc := f.sagas()
	conv := "call-" + uuid.NewString()
	first, err := sc.Choose(f.ctx, scoped(conv), commitRequest(slot(t, 10)).Intent, true) // booked by a tool, on its way

	require.NoError(t, err)
	for _, hold := range []bool{true, false} {
		var e edge.Error
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
	sc := desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: queue, Settings: f.settings}})
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}, Tools: voice.Config{RetellKey: "retell-key"}}))
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
	// The five refused books hold nothing: the first is the one key
	// outstanding, and the one the next book is told to check.
	open := f.outstanding(sc, "retell/"+callID, 9)
	require.Len(t, open, 1, "only the first is outstanding")
	again := book(16)
	require.Contains(t, again, "An earlier booking in this call is not settled", "the first is still outstanding")
	require.Contains(t, again, "(request_key "+open[0]+")")
}

// noSagas is a saga client on a queue whose worker runs conversations and
// no booking saga, as during a deploy: every booking call on it answers
// pending_reconciliation.
func (f *fixture) noSagas() *desk.Desk {
	f.t.Helper()
	queue := "no-sagas-" + uuid.NewString()
	w := worker.New(f.client, queue, worker.Options{})
	w.RegisterWorkflow(workflows.Conversation)
	require.NoError(f.t, w.Start())
	f.t.Cleanup(w.Stop)
	return desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: queue, Settings: f.settings}})
}

// outstanding are the keys the conversation holds open, as a new choice
// of another slot sees them.
func (f *fixture) outstanding(sc *desk.Desk, conv string, hour int) []string {
	f.t.Helper()
	ch, err := sc.Choose(f.ctx, conv, commitRequest(slot(f.t, hour)).Intent, false)
	require.NoError(f.t, err)
	return ch.Outstanding
}

// bookAsTheREADMESays takes an intent for hour in conv and books it with
// POST /v1/bookings and its conversation, and requires the answer
// pending (the tests' sagas never answer).
func (f *fixture) bookAsTheREADMESays(url, conv string, hour int) api.IntentAnswer {
	f.t.Helper()
	var intent api.IntentAnswer
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: conv, Slot: bookingBody("", slot(f.t, hour)).Slot}, &intent))
	body := bookingBody(intent.RequestKey, slot(f.t, hour))
	body.ConversationID = conv
	var r receipt.Receipt
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	require.Equal(f.t, receipt.StatusPending, r.Status)
	return intent
}

// A back end that follows the README (an intent, then POST /v1/bookings
// with its conversation) is held by the pending rule too: its booking,
// pending, holds the next choice of the conversation.
func TestABookingThroughTheAPIMarksItsConversation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := f.noSagas()
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}}))
	t.Cleanup(srv.Close)
	conv := "call-" + uuid.NewString()
	intent := f.bookAsTheREADMESays(srv.URL, conv, 10)

	var e edge.Error
	require.Equal(t, http.StatusConflict, f.call("POST", srv.URL+"/v1/intents", api.IntentBody{ConversationID: conv, Slot: bookingBody("", slot(t, 11)).Slot}, &e))
	require.Equal(t, "earlier_booking_pending", e.Code)
	require.Contains(t, e.Message, intent.RequestKey)

	next := bookingBody(uuid.NewString(), slot(t, 12))
	next.ConversationID = conv
	require.Equal(t, http.StatusConflict, f.call("POST", srv.URL+"/v1/bookings", next, &e), "held by the first, whatever its key")
	require.Equal(t, "earlier_booking_pending", e.Code)
	next.ConversationID = "call-" + uuid.NewString()
	require.Equal(t, http.StatusBadRequest, f.call("POST", srv.URL+"/v1/bookings", next, &e), "a key the conversation did not give")
	require.Equal(t, "not_this_conversation", e.Code)
	require.Zero(t, f.bookings())
}

// A call held back by an earlier pending booking sends nothing, so its own
// key holds nothing: a book of another slot, a hold through
// POST /v1/intents and a held select_slot leave the earlier booking the
// only one outstanding.
func TestAHeldCallLeavesNoKeyOfItsOwn(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := f.noSagas()
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}, Tools: voice.Config{RetellKey: "retell-key"}}))
	t.Cleanup(srv.Close)
	conv := "call-" + uuid.NewString()
	first := f.retellTool(srv.URL, conv, "book", bookArgs(t, 10))
	require.True(t, strings.HasPrefix(first, "[pending_reconciliation]"), first)
	firstKey := f.outstanding(sc, "retell/"+conv, 9)
	require.Len(t, firstKey, 1)

	require.Contains(t, f.retellTool(srv.URL, conv, "book", bookArgs(t, 11)), "An earlier booking in this call is not settled")
	hold := bookArgs(t, 12)
	hold["hold"] = true
	require.Contains(t, f.retellTool(srv.URL, conv, "select_slot", hold), "An earlier booking in this call is not settled")
	require.Equal(t, firstKey, f.outstanding(sc, "retell/"+conv, 14), "the held calls hold nothing")

	// The same through the REST routes, in a conversation of the back end's.
	rest := "call-" + uuid.NewString()
	intent := f.bookAsTheREADMESays(srv.URL, rest, 10)
	var e edge.Error
	require.Equal(t, http.StatusConflict, f.call("POST", srv.URL+"/v1/intents", api.IntentBody{ConversationID: rest,
		Slot: bookingBody("", slot(t, 13)).Slot, Hold: true, ExpectedPolicyVersion: policyVersion}, &e))
	require.Equal(t, []string{intent.RequestKey}, f.outstanding(sc, scoped(rest), 14), "the refused hold holds nothing")
}

// reschedule_booking and a held select_slot wait for the call's pending
// booking too: nothing moves, nothing is held.
func TestARescheduleAndAHoldWaitForThePendingBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	conv := "call-" + uuid.NewString()
	booked := f.retellTool(url, conv, "book", bookArgs(t, 10))
	require.True(t, strings.HasPrefix(booked, "[confirmed]"), booked)
	var key string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT request_key FROM booking").Scan(&key))
	// A second booking of the call on its way (its book not answered yet).
	sc := f.sagas()
	onItsWay, err := sc.Choose(f.ctx, "retell/"+conv, commitRequest(slot(t, 16)).Intent, true)
	require.NoError(t, err)

	moved := f.retellTool(url, conv, "reschedule_booking", map[string]any{"request_key": key, "starts_at": slot(t, 12).Format(time.RFC3339)})
	require.Contains(t, moved, "An earlier booking in this call is not settled", moved)
	require.Contains(t, moved, onItsWay.RequestKey)
	hold := bookArgs(t, 14)
	hold["hold"] = true
	held := f.retellTool(url, conv, "select_slot", hold)
	require.Contains(t, held, "An earlier booking in this call is not settled", held)
	require.Equal(t, 1, f.bookings(), "nothing moved, nothing held")
	var status string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT status FROM booking WHERE request_key = $1", key).Scan(&status))
	require.Equal(t, "confirmed", status)
}

// tableRows counts the rows of every table of the store, events included.
func (f *fixture) tableRows() map[string]int {
	f.t.Helper()
	out, err := f.countRows(f.ctx)
	require.NoError(f.t, err)
	require.Contains(f.t, out, "booking_event", "the list is the store's")
	return out
}

// countRows is tableRows without failing the test, for a condition
// polled in a goroutine of its own (require.Never's).
func (f *fixture) countRows(ctx context.Context) (map[string]int, error) {
	rows, err := f.pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, table := range tables {
		var n int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM "`+table+`"`).Scan(&n); err != nil {
			return nil, err
		}
		out[table] = n
	}
	return out, nil
}

// A read writes nothing: GET /v1/bookings/{key} of a pending booking,
// with a webhook endpoint registered (whose pending marks a write would
// add), leaves every table as it was, for as long as a mark takes to be
// written (its bound is two seconds).
func TestReadingAPendingBookingWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := f.noSagas()
	vault := store.New(f.pool, store.Config{})
	_, _, err := vault.PutEndpoint(f.ctx, "crm", "https://receiver.example.test/hook")
	require.NoError(t, err)
	key := uuid.NewString()
	r, err := sc.Commit(f.ctx, key, commitRequest(slot(t, 10)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusPending, r.Status)
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog}}, REST: api.Config{Webhooks: vault}}))
	t.Cleanup(srv.Close)

	before := f.tableRows()
	var got receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", srv.URL+"/v1/bookings/"+key, nil, &got))
	require.Equal(t, receipt.StatusPending, got.Status)
	wrote := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		now, err := f.countRows(ctx)
		return err == nil && !maps.Equal(before, now)
	}
	require.Never(t, wrote, 3*time.Second, 100*time.Millisecond, "a read wrote to the store")
}
