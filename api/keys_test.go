package api

import (
	"bytes"
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
)

// guarded serves the API with cfg over a Temporal nobody answers: a call
// that passes the keys and the limits gets a 503, one that does not gets
// the guard's own answer.
func guarded(t *testing.T, cfg edge.Config) string {
	t.Helper()
	tc, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	cfg.CallTimeout = 200 * time.Millisecond
	srv := httptest.NewServer(serve(desk.New(tc, nil, desk.Options{}), cfg))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serve is the REST routes over c on the edge's server with cfg, as the
// wiring mounts them.
func serve(c Sagas, cfg edge.Config) http.Handler {
	srv := edge.New(cfg)
	srv.Mount(New(c, srv.Settings(), Config{}).Routes()...)
	return srv.Handler()
}

// keyring is a keys file of keys, loaded.
func keyring(t *testing.T, keys ...apikey.Key) *apikey.Keyring {
	t.Helper()
	file := filepath.Join(t.TempDir(), "keys.json")
	for _, k := range keys {
		require.NoError(t, apikey.SaveKey(file, k, false))
	}
	kr, err := apikey.LoadKeyring(file)
	require.NoError(t, err)
	return kr
}

func send(t *testing.T, method, url, secret string, body []byte) (int, edge.Error, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var e edge.Error
	_ = json.NewDecoder(res.Body).Decode(&e)
	return res.StatusCode, e, res.Header
}

func TestEachScopeCallsItsOwnRoutes(t *testing.T) {
	t.Parallel()
	agent, agentKey, err := apikey.NewKey("voice", apikey.ScopeAgent)
	require.NoError(t, err)
	admin, adminKey, err := apikey.NewKey("console", apikey.ScopeAdmin)
	require.NoError(t, err)
	ops, opsKey, err := apikey.NewKey("oncall", apikey.ScopeOps)
	require.NoError(t, err)
	url := guarded(t, edge.Config{Keys: keyring(t, agentKey, adminKey, opsKey)})
	policy := []byte(`{"version":"v2","slot_minutes":30,"opens_at":"08:00","closes_at":"20:00","hold_ttl_minutes":10}`)

	for _, c := range []struct {
		method, path, secret string
		body                 []byte
		want                 int
	}{
		{"PUT", "/v1/policy", agent, policy, http.StatusForbidden},
		{"PUT", "/v1/resources/flat-1", agent, []byte(`{"kind":"property","capacity":1,"time_zone":"UTC"}`), http.StatusForbidden},
		{"PUT", "/v1/policy", admin, policy, http.StatusServiceUnavailable},
		{"GET", "/v1/bookings/k-1", admin, nil, http.StatusForbidden},
		{"GET", "/v1/bookings/k-1", agent, nil, http.StatusServiceUnavailable},
		{"GET", "/v1/ops/attention", agent, nil, http.StatusForbidden},
		{"GET", "/v1/ops/attention", ops, nil, http.StatusServiceUnavailable},
		{"GET", "/v1/bookings/k-1", "", nil, http.StatusUnauthorized},
		{"GET", "/v1/bookings/k-1", "bsk_notakey", nil, http.StatusUnauthorized},
	} {
		code, e, _ := send(t, c.method, url+c.path, c.secret, c.body)
		require.Equal(t, c.want, code, "%s %s: %+v", c.method, c.path, e)
		if c.want == http.StatusForbidden {
			require.Equal(t, "wrong_scope", e.Code)
		}
	}
}

func TestKeysAreHashedAtRestAndRotateWithoutARestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "keys.json")
	old, oldKey, err := apikey.NewKey("vapi-2026-11", apikey.ScopeAgent)
	require.NoError(t, err)
	require.NoError(t, apikey.SaveKey(file, oldKey, false))
	require.Error(t, apikey.SaveKey(file, oldKey, false), "a second key of one name")
	keys, err := apikey.LoadKeyring(file)
	require.NoError(t, err)
	url := guarded(t, edge.Config{Keys: keys})

	stored, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NotContains(t, string(stored), old, "the secret is on disk")
	require.Contains(t, string(stored), oldKey.Hash)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	status := func(secret string) int {
		code, _, _ := send(t, "GET", url+"/v1/bookings/k-1", secret, nil)
		return code
	}
	require.Equal(t, http.StatusServiceUnavailable, status(old))

	// Rotation: the new key is added, then the old one removed.
	next, nextKey, err := apikey.NewKey("vapi-2026-12", apikey.ScopeAgent)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, must(json.Marshal([]apikey.Key{nextKey})), 0o600))
	require.Eventually(t, func() bool { return status(old) == http.StatusUnauthorized }, 5*time.Second, 100*time.Millisecond, "the old key still works")
	require.Equal(t, http.StatusServiceUnavailable, status(next))

	// A broken file keeps the keys last read rather than opening the API.
	require.NoError(t, os.WriteFile(file, []byte("{not json"), 0o600))
	time.Sleep(1100 * time.Millisecond) // the file is looked at once a second
	require.Equal(t, http.StatusServiceUnavailable, status(next))
	require.Equal(t, http.StatusUnauthorized, status(""))
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRepeatsAreFreeAndAFloodIsLimited(t *testing.T) {
	t.Parallel()
	secret, key, err := apikey.NewKey("voice", apikey.ScopeAgent)
	require.NoError(t, err)
	url := guarded(t, edge.Config{Keys: keyring(t, key), Limits: &ratelimit.Limits{PerSecond: 5, Burst: 10, RepeatWindow: time.Minute}})
	body, err := json.Marshal(BookingBody{RequestKey: "k-dup", Slot: slot(), ExpectedPolicyVersion: "p1"})
	require.NoError(t, err)

	// 50 copies of one booking at once: none is refused for the rate.
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Go(func() { codes[i], _, _ = send(t, "POST", url+"/v1/bookings", secret, body) })
	}
	wg.Wait()
	for _, c := range codes {
		require.NotEqual(t, http.StatusTooManyRequests, c)
	}

	// 50 different bookings at once: past the burst, 429 with Retry-After.
	limited := 0
	for i := range 50 {
		b, err := json.Marshal(BookingBody{RequestKey: "k-" + strings.Repeat("x", i+1), Slot: slot(), ExpectedPolicyVersion: "p1"})
		require.NoError(t, err)
		code, e, h := send(t, "POST", url+"/v1/bookings", secret, b)
		if code == http.StatusTooManyRequests {
			limited++
			require.Equal(t, "rate_limited", e.Code)
			require.NotEmpty(t, h.Get("Retry-After"))
		}
	}
	require.Greater(t, limited, 30)
}

// Every 5xx says it is retryable, whatever the route answers otherwise:
// an intent whose conversation Temporal can't reach included.
func TestEveryServerErrorSaysRetryable(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{})
	body, err := json.Marshal(IntentBody{ConversationID: "call-1", Slot: slot(), Hold: true, ExpectedPolicyVersion: "p1"})
	require.NoError(t, err)
	res, err := http.Post(url+"/v1/intents", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	var e struct {
		Code      string `json:"code"`
		Retryable bool   `json:"retryable"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
	require.Equal(t, "temporarily_unavailable", e.Code)
	require.True(t, e.Retryable)
}
