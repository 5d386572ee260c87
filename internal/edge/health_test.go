package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/health"
)

func TestReadinessIsBareAndOpsSeeWhatIsDown(t *testing.T) {
	t.Parallel()
	store := errors.New("store: dial tcp 10.0.3.7:5432: connection refused")
	var down atomic.Bool
	secret, ops, err := apikey.NewKey("ops", apikey.ScopeOps)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, apikey.SaveKey(file, ops, false))
	keys, err := apikey.LoadKeyring(file)
	require.NoError(t, err)
	srv := httptest.NewServer(New(Config{Keys: keys, Ready: []health.Check{
		{Name: "temporal", Fn: func(context.Context) error { return nil }},
		{Name: "store", Fn: func(context.Context) error {
			if down.Load() {
				return store
			}
			return nil
		}},
	}}).Handler())
	t.Cleanup(srv.Close)
	get := func(path, secret string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.RequestURI = ""
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var r map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
		return res.StatusCode, r
	}
	code, r := get("/readyz", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"status": "ready"}, r)
	down.Store(true)
	code, r = get("/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, map[string]any{"status": "not_ready"}, r, "an outsider learns nothing of which dependency failed, or how")

	code, _ = get("/v1/ops/readiness", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, r = get("/v1/ops/readiness", secret)
	require.Equal(t, http.StatusOK, code, "a report, not a probe")
	require.Equal(t, "not_ready", r["status"])
	require.Equal(t, map[string]any{"store": store.Error(), "temporal": "ok"}, r["checks"])
}
