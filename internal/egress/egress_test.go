package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// names is a resolver of fixed answers; a name can be changed between
// calls, as DNS rebinding would.
type names struct {
	mu sync.Mutex
	m  map[string][]string
}

func (n *names) set(host string, addrs ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m[host] = addrs
}

func (n *names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []netip.Addr
	for _, a := range n.m[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

// network stands in for the internet: every dial it is asked for is
// recorded and connected to one loopback server instead, so no packet
// goes anywhere else.
type network struct {
	mu     sync.Mutex
	dialed []string
	to     string
}

func (n *network) dial(ctx context.Context, network, address string) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, address)
	n.mu.Unlock()
	return (&net.Dialer{}).DialContext(ctx, network, n.to)
}

func (n *network) calls() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dialed...)
}

func setup(t *testing.T, h http.HandlerFunc) (*Guard, *names, *network) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	r := &names{m: map[string][]string{
		"hooks.example.com":        {"93.184.216.34"},
		"localhost":                {"127.0.0.1"},
		"metadata.google.internal": {"169.254.169.254"},
		"intranet.example.com":     {"10.1.2.3"},
		"half.example.com":         {"93.184.216.34", "192.168.1.10"},
		"nat64.example.com":        {"64:ff9b::a00:1"},
	}}
	n := &network{to: srv.Listener.Addr().String()}
	return &Guard{Resolver: r, Dial: n.dial}, r, n
}

func TestInternalAddressesAreRefusedAtRegistration(t *testing.T) {
	t.Parallel()
	g, _, n := setup(t, func(http.ResponseWriter, *http.Request) {})
	ctx := t.Context()
	for _, u := range []string{
		"http://127.0.0.1/hooks", "http://localhost:8080/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/", "http://10.0.0.5/", "https://intranet.example.com/",
		"https://half.example.com/", "http://[fd00:ec2::254]/", "http://[::ffff:10.0.0.1]/", "http://100.64.0.1/",
		"http://0.0.0.0/", "https://nat64.example.com/", "http://[fe80::1]/", "http://224.0.0.1/",
	} {
		err := g.CheckURL(ctx, u)
		var refused *RefusedError
		require.ErrorAs(t, err, &refused, u)
	}
	for _, u := range []string{"ftp://hooks.example.com/", "hooks.example.com/x", "https://user:pw@hooks.example.com/", "https://nowhere.example/"} {
		require.Error(t, g.CheckURL(ctx, u), u)
	}
	require.NoError(t, g.CheckURL(ctx, "https://hooks.example.com/bookings"))
	require.Empty(t, n.calls(), "registration resolves, never connects")
}

func TestLoopbackCanBeAllowedAndNothingElse(t *testing.T) {
	t.Parallel()
	g, _, _ := setup(t, func(http.ResponseWriter, *http.Request) {})
	g.AllowLoopback = true
	ctx := t.Context()
	require.NoError(t, g.CheckURL(ctx, "http://127.0.0.1:9000/hooks"))
	require.NoError(t, g.CheckURL(ctx, "http://localhost:9000/hooks"))
	for _, u := range []string{"http://169.254.169.254/", "http://10.0.0.5/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/"} {
		var refused *RefusedError
		require.ErrorAs(t, g.CheckURL(ctx, u), &refused, u)
	}
}

// TestANameRebindingToAnInternalAddressIsRefusedAtDelivery: a name that
// was public at registration and resolves to a private address when the
// delivery is sent is refused then, before any connection.
func TestANameRebindingToAnInternalAddressIsRefusedAtDelivery(t *testing.T) {
	t.Parallel()
	g, r, n := setup(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ctx := t.Context()
	require.NoError(t, g.CheckURL(ctx, "http://hooks.example.com/bookings"))
	c := g.Client(5 * time.Second)
	res, err := c.Post("http://hooks.example.com/bookings", "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	require.Equal(t, []string{"93.184.216.34:80"}, n.calls(), "the connection goes to the address checked")

	r.set("hooks.example.com", "169.254.169.254")
	c.CloseIdleConnections()
	_, err = c.Post("http://hooks.example.com/bookings", "application/json", nil)
	var refused *RefusedError
	require.ErrorAs(t, err, &refused)
	require.Len(t, n.calls(), 1, "no connection to the rebound address")
}

// TestARedirectIsTheReceiversAnswer: a 3xx is not followed, so a
// receiver cannot bounce a delivery to an internal address.
func TestARedirectIsTheReceiversAnswer(t *testing.T) {
	t.Parallel()
	g, _, n := setup(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	res, err := g.Client(5*time.Second).Post("http://hooks.example.com/x", "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, []string{"93.184.216.34:80"}, n.calls(), "only the receiver was dialled")
}

// IANA's special-purpose address registries (IPv4 and IPv6, as of
// 2024-2025) mark these blocks not globally reachable; none is a receiver
// anyone can run, and documentation ones are what a copied example holds.
func TestAddressesIANAMarksNotGloballyReachableAreRefused(t *testing.T) {
	t.Parallel()
	g, _, _ := setup(t, func(http.ResponseWriter, *http.Request) {})
	for _, host := range []string{
		"192.0.2.10", "198.51.100.7", "203.0.113.5", // TEST-NET-1, -2, -3
		"[2001:db8::1]", "[3fff::1]", // IPv6 documentation, RFC 3849 and RFC 9637
		"[100::1]", "[2001:2::1]", "[2001:10::1]", "[5f00::1]", // discard-only, benchmarking, ORCHID, SRv6 SIDs
	} {
		var refused *RefusedError
		require.ErrorAs(t, g.CheckURL(t.Context(), "https://"+host+"/hooks"), &refused, host)
	}
	require.NoError(t, g.CheckURL(t.Context(), "https://[2606:4700::1111]/hooks"), "a public IPv6 address")
}
