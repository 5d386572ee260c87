package systemtest

import (
	"context"
	"errors"
	"github.com/bookingsaga/bookingsaga/app"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// TestAWebhookToAnInternalAddressIsRefused: an admin cannot Register a
// receiver on loopback (unless the deployment allows it, as the dev stack
// does), link-local, metadata or private addresses, and nothing is
// written for the refused ones.
func TestAWebhookToAnInternalAddressIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	closed := f.serveAPI(app.EdgeConfig{REST: api.Config{Egress: &egress.Guard{}}})
	for _, u := range []string{"http://127.0.0.1:9/hooks", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.7/hooks",
		"http://[::1]:9/", "http://[fd00:ec2::254]/"} {
		var e edge.Error
		require.Equal(t, http.StatusBadRequest, f.call("PUT", closed+"/v1/webhooks/ep-"+uuid.NewString()[:8], api.WebhookBody{URL: u}, &e), u)
		require.Equal(t, "refused_url", e.Code, u)
	}
	var n int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM webhook_endpoint").Scan(&n))
	require.Zero(t, n, "nothing written")

	dev := f.serveAPI(app.EdgeConfig{REST: api.Config{Egress: &egress.Guard{AllowLoopback: true}}})
	var e edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("PUT", dev+"/v1/webhooks/ep-meta", api.WebhookBody{URL: "http://169.254.169.254/"}, &e),
		"loopback allowed, metadata still refused")
	var ans api.WebhookAnswer
	require.Equal(t, http.StatusCreated, f.call("PUT", dev+"/v1/webhooks/ep-local", api.WebhookBody{URL: "http://127.0.0.1:9/hooks"}, &ans))
}

// rebinding answers a name with a public address until told otherwise.
type rebinding struct {
	mu   sync.Mutex
	addr string
}

func (r *rebinding) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host != "hooks.agency.example" {
		return nil, errors.New("no such host")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return []netip.Addr{netip.MustParseAddr(r.addr)}, nil
}

func (r *rebinding) set(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addr = addr
}

// TestADeliveryToANameThatNowPointsInsideIsRefused: the receiver's name
// was public when registered and resolves to a private address when an
// event is sent. The delivery is refused before any connection, kept for
// later, and the endpoint's last_error says so without the error text.
func TestADeliveryToANameThatNowPointsInsideIsRefused(t *testing.T) {
	t.Parallel()
	f := fixtureOn(t, pgtest.New(t))
	f.seed()
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	srv := httptest.NewUnstartedServer(rc)
	// Each delivery dials anew, as after an idle connection closes: the
	// name is resolved and checked again then. (A pooled connection stays
	// with the address it was checked for.)
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	t.Cleanup(srv.Close)
	names := &rebinding{addr: "93.184.216.34"}
	var mu sync.Mutex
	var dialed []string
	// The internet, for this test: every allowed dial reaches the local
	// receiver, so no packet leaves loopback.
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, address)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	guard := &egress.Guard{Resolver: names, Dial: dial}
	f.acts.Egress = guard
	f.worker = f.startWorker(worker.Options{})
	url := f.serveAPI(app.EdgeConfig{REST: api.Config{Egress: guard}})

	var ans api.WebhookAnswer
	id := "ep-" + uuid.NewString()[:8]
	require.Equal(t, http.StatusCreated, f.call("PUT", url+"/v1/webhooks/"+id, api.WebhookBody{URL: "http://hooks.agency.example/hooks"}, &ans))
	rc.setSecret(secretOf(t, ans))
	require.Equal(t, receipt.StatusConfirmed, f.commit(uuid.NewString(), commitRequest(slot(t, 10))).Status)
	f.eventually(func() bool { return rc.count("booking.confirmed") == 1 }, "delivered while the name is public")

	names.set("10.0.0.7")
	require.Equal(t, receipt.StatusConfirmed, f.commit(uuid.NewString(), commitRequest(slot(t, 11))).Status)
	f.eventually(func() bool {
		var eps []api.WebhookStatus
		return f.call("GET", url+"/v1/webhooks", nil, &eps) == http.StatusOK && len(eps) == 1 && eps[0].LastError != ""
	}, "the refusal is on the endpoint")
	var eps []api.WebhookStatus
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/webhooks", nil, &eps))
	require.Equal(t, "refused: the receiver's name resolves to a private address", eps[0].LastError)
	require.Equal(t, 1, eps[0].Undelivered, "kept for when the name is fixed")
	require.Equal(t, 1, rc.count("booking.confirmed"), "nothing reached the rebound address")
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dialed {
		require.Equal(t, "93.184.216.34:80", d, "only the checked public address was dialled")
	}
}
