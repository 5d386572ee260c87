package systemtest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// receiver is an agent backend's webhook endpoint, as Standard Webhooks
// has one verify a delivery, that can be down.
type receiver struct {
	t      *testing.T
	secret []byte
	down   atomic.Bool
	mu     sync.Mutex
	got    map[string]int    // delivery id → times taken
	types  map[string]string // delivery id → type
	tried  atomic.Int32      // deliveries refused while down
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rc.down.Load() {
		rc.tried.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(r.Body)
	require.NoError(rc.t, err)
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	rc.mu.Lock()
	secret := rc.secret
	rc.mu.Unlock()
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(r.Header.Get("webhook-signature"))) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	require.NoError(rc.t, json.Unmarshal(body, &ev))
	require.Equal(rc.t, id, ev.ID)
	rc.mu.Lock()
	rc.got[id]++
	rc.types[id] = ev.Type
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) count(typ string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, t := range rc.types {
		if t == typ {
			n++
		}
	}
	return n
}

// register makes an endpoint for rc through the API and keeps its secret.
// Its id is the test's own: every test's dispatchers share one Temporal
// namespace, where an endpoint's id names its dispatcher.
func (f *fixture) register(url string, rc *receiver) string {
	f.t.Helper()
	srv := httptest.NewServer(rc)
	f.t.Cleanup(srv.Close)
	var ans api.WebhookAnswer
	id := "ep-" + uuid.NewString()[:8]
	require.Equal(f.t, http.StatusCreated, f.call("PUT", url+"/v1/webhooks/"+id, api.WebhookBody{URL: srv.URL + "/hooks"}, &ans))
	rc.setSecret(secretOf(f.t, ans))
	return id
}

func (rc *receiver) setSecret(secret []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret = secret
}

// secretOf is the signing secret an endpoint's creation answered.
func secretOf(t testing.TB, ans api.WebhookAnswer) []byte {
	t.Helper()
	secret, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(ans.Secret, "whsec_"))
	require.NoError(t, err)
	return secret
}

// A receiver that is down gets everything once it is back: each event
// once by its delivery id, signed; while it is down, the endpoint shows in
// the operator's attention list.
func TestAWebhookReceiverThatWasDownGetsEveryEventOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	id := f.register(url, rc)
	rc.down.Store(true)

	keys := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	for i, key := range keys {
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, 9+i)), &r))
		require.Equal(t, receipt.StatusConfirmed, r.Status)
	}
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+keys[0]+"/cancel", nil, &r))
	f.eventually(func() bool {
		var a api.AttentionAnswer
		return f.call("GET", url+"/v1/ops/attention", nil, &a) == http.StatusOK && len(a.Webhooks) == 1 && rc.tried.Load() >= 2
	}, "the failing receiver is retried and shows in attention")

	rc.down.Store(false)
	st := store.New(f.pool, store.Config{})
	f.eventually(func() bool {
		eps, err := st.Endpoints(f.ctx)
		return err == nil && len(eps) == 1 && eps[0].Undelivered == 0 && eps[0].FailingSince == nil
	}, "every delivery taken once the receiver is back")
	f.record(booking.WebhooksIDPrefix+id, "webhooks_receiver_back")
	var ids []string
	rows, err := f.pool.Query(f.ctx, "SELECT delivery_id::text FROM webhook_delivery ORDER BY delivery_id")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.Len(t, ids, 4, "three confirmations and a cancellation")
	for _, id := range ids {
		require.Equal(t, 1, rc.got[id], "delivery %s taken exactly once", id)
	}
	require.Len(t, rc.got, 4)
}

// A booking whose answer was lost (pending_reconciliation) is announced
// settled, once, when the store's decision is known.
func TestAPendingBookingIsAnnouncedSettledOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	plain := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	f.register(plain, rc)

	fault := &lostReply{}
	tc, err := client.NewClientFromExisting(f.client, client.Options{Namespace: temporalServer().GetDefaultNamespace(),
		Interceptors: []interceptor.ClientInterceptor{fault}})
	require.NoError(t, err)
	vault := store.New(f.pool, store.Config{})
	sc := desk.New(tc, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: f.queue, Settings: f.settings, Contacts: vault},
		OnPending: app.NotePending(vault, zap.NewNop())})
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog, Bookings: vault, Names: speech.NewNames(vault)}}, REST: api.Config{Webhooks: vault}}))
	t.Cleanup(srv.Close)
	fault.lose.Store(true)
	key := uuid.NewString()
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", srv.URL+"/v1/bookings", bookingBody(key, slot(t, 14)), &r))
	require.Equal(t, receipt.StatusPending, r.Status)
	require.Equal(t, http.StatusOK, f.call("POST", srv.URL+"/v1/bookings", bookingBody(key, slot(t, 14)), &r), "answered pending twice")

	f.eventually(func() bool { return rc.count("booking.settled") == 1 && rc.count("booking.confirmed") == 1 },
		"the decision goes out, and once as booking.settled")
}

// TestAnAdminPausesRotatesAndDeletesAnEndpoint: paused, an endpoint's
// deliveries wait and go out on resume; after a rotation they are signed
// with the new secret only; deleted, its dispatcher ends.
func TestAnAdminPausesRotatesAndDeletesAnEndpoint(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	id := f.register(url, rc)
	status := func() api.WebhookStatus {
		var eps []api.WebhookStatus
		require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/webhooks", nil, &eps))
		require.Len(t, eps, 1)
		return eps[0]
	}

	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/webhooks/"+id+"/pause", nil, &map[string]any{}))
	require.True(t, status().Paused)
	require.Equal(t, receipt.StatusConfirmed, f.commit(uuid.NewString(), commitRequest(slot(t, 10))).Status)
	f.eventually(func() bool { return status().Undelivered == 1 }, "the event waits")
	require.Zero(t, rc.count("booking.confirmed"), "nothing is sent while paused")
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/webhooks/"+id+"/resume", nil, &map[string]any{}))
	f.eventually(func() bool { return rc.count("booking.confirmed") == 1 }, "delivered on resume")

	var rotated api.WebhookAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/webhooks/"+id+"/secret", nil, &rotated))
	old := rc.secret
	rc.setSecret(secretOf(t, rotated))
	require.NotEqual(t, old, rc.secret)
	require.Equal(t, receipt.StatusConfirmed, f.commit(uuid.NewString(), commitRequest(slot(t, 11))).Status)
	f.eventually(func() bool { return rc.count("booking.confirmed") == 2 }, "signed with the new secret")

	var gone map[string]any
	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/webhooks/"+id, nil, &gone))
	f.eventually(func() bool {
		d, err := f.client.DescribeWorkflowExecution(f.ctx, booking.WebhooksIDPrefix+id, "")
		return err == nil && d.WorkflowExecutionInfo.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}, "the dispatcher ends")
	var e edge.Error
	require.Equal(t, http.StatusNotFound, f.call("DELETE", url+"/v1/webhooks/"+id, nil, &e))
	require.Equal(t, http.StatusNotFound, f.call("POST", url+"/v1/webhooks/"+id+"/pause", nil, &e))
}

// The worker brings back every agency's webhook dispatchers at its
// start, not the default agency's alone: each agency's endpoint has its
// dispatcher, under its own id.
func TestEveryAgencysWebhookDispatcherIsBroughtBack(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lyon := f.addAgency("lyon")
	id := "hooks-" + uuid.NewString()[:8]
	wids := []string{booking.WebhooksIDPrefix + id, agency.Scoped(lyon, booking.WebhooksIDPrefix+id)}
	for _, ctx := range []context.Context{f.ctx, lyon} {
		_, _, err := f.acts.Store.PutEndpoint(ctx, id, "http://127.0.0.1:9/hooks")
		require.NoError(t, err)
	}
	require.NoError(t, app.EnsureWebhooks(f.ctx, f.client, f.queue, f.acts.Store))
	t.Cleanup(func() {
		for _, wid := range wids {
			_ = f.client.TerminateWorkflow(f.ctx, wid, "", "the test is over")
		}
	})
	for _, wid := range wids {
		d, err := f.client.DescribeWorkflowExecution(f.ctx, wid, "")
		require.NoError(t, err, wid)
		require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), wid)
	}
}
