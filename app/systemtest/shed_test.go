package systemtest

import (
	"bytes"
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/admission"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Past what it admits, the API answers a booking call at once with the
// "never sent" answer (503, retryable, a Retry-After, no receipt), before
// it reaches Temporal; the calls it admitted are answered as they come
// out (pending here: no worker takes their sagas), never that way.
func TestOverloadIsShedAtOnceAndNothingAdmittedIs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inFlight := make(chan int, 16)
	sc := desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: "no-sagas-" + uuid.NewString(),
		Settings: workflows.Settings{CommitWait: 2 * time.Second}}})
	admit := admission.New(admission.Config{Max: 2, Min: 2, OnInFlight: func(n int) { inFlight <- n }})
	srv := httptest.NewServer(app.Edge(sc, app.EdgeConfig{Config: edge.Config{Keys: apiKeys, Settings: edge.Settings{Catalogue: f.catalog, Admission: admit}}}))
	t.Cleanup(srv.Close)
	post := func(key string, hour int) (int, receipt.Receipt, http.Header) {
		body, _ := json.Marshal(bookingBody(key, slot(t, hour)))
		req, _ := http.NewRequestWithContext(f.ctx, http.MethodPost, srv.URL+"/v1/bookings", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, receipt.Receipt{}, nil
		}
		defer res.Body.Close()
		var r receipt.Receipt
		_ = json.NewDecoder(res.Body).Decode(&r)
		return res.StatusCode, r, res.Header
	}
	send := func(method, path string, body any) (int, map[string]any, http.Header) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(f.ctx, method, srv.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out := map[string]any{}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		return res.StatusCode, out, res.Header
	}
	type answer struct {
		code int
		r    receipt.Receipt
	}
	admitted := make(chan answer, 2)
	for i := range 2 {
		go func() {
			code, r, _ := post(uuid.NewString(), 10+i)
			admitted <- answer{code, r}
		}()
	}
	waitInFlight := func(want int) {
		for {
			select {
			case n := <-inFlight:
				if n == want {
					return
				}
			case <-f.ctx.Done():
				t.Fatalf("never %d booking calls in flight", want)
			}
		}
	}
	waitInFlight(2)
	shedKey := uuid.NewString()
	code, shed, header := send(http.MethodPost, "/v1/bookings", bookingBody(shedKey, slot(t, 13)))
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, true, shed["retryable"])
	require.Contains(t, shed["message"], "not sent")
	require.Contains(t, []string{"1", "2"}, header.Get("Retry-After"), "a second or two, so that a shed burst comes back spread")
	require.Empty(t, admitted, "answered while the admitted calls are still waiting")
	// No call not admitted answers a status: the call changed nothing,
	// and a booking its key made before may stand.
	newKey := uuid.NewString()
	move := map[string]any{"new_request_key": newKey, "property_id": "paris-11", "agent_id": "agent-00", "time_zone": "Europe/Paris",
		"local_start": "2026-12-08T10:00", "expected_policy_version": "p1"}
	require.Equal(t, shedKey, shed["request_key"], "the key to send again with")
	shedAnswers := []map[string]any{shed}
	for _, c := range []struct {
		method, path, key string
		body              any
	}{{http.MethodGet, "/v1/bookings/" + shedKey, shedKey, nil}, {http.MethodPost, "/v1/bookings/" + shedKey + "/cancel", shedKey, nil},
		{http.MethodPost, "/v1/bookings/" + shedKey + "/reschedule", newKey, move}} {
		code, body, header := send(c.method, c.path, c.body)
		require.Equal(t, http.StatusServiceUnavailable, code, c.path)
		require.Equal(t, true, body["retryable"], c.path)
		require.NotEmpty(t, header.Get("Retry-After"), c.path)
		require.Equal(t, c.key, body["request_key"], "the key the call names: %s", c.path)
		shedAnswers = append(shedAnswers, body)
	}
	for _, a := range shedAnswers {
		require.NotContains(t, a, "status", "a status in a call not sent: %v", a)
		require.Equal(t, "temporarily_unavailable", a["code"])
	}
	for range 2 {
		a := <-admitted
		require.Equal(t, http.StatusOK, a.code)
		require.Equal(t, receipt.StatusPending, a.r.Status, "an admitted call is never answered as shed")
	}
	// Room again once they are answered.
	waitInFlight(0)
	code, r, _ := post(uuid.NewString(), 14)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, receipt.StatusPending, r.Status)
}
