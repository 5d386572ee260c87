package gcal_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// tokenServer is Google's OAuth token endpoint for a service account: it
// records the scopes each signed assertion asks for.
type tokenServer struct {
	mu     sync.Mutex
	scopes []string
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.FormValue("assertion"), ".")
	if len(parts) != 3 {
		http.Error(w, "no assertion", http.StatusBadRequest)
		return
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var claims struct {
		Scope string `json:"scope"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.scopes = append(s.scopes, claims.Scope)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600}`))
}

// serviceAccount writes a service account key whose token endpoint is url.
func serviceAccount(t *testing.T, url string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	sa, err := json.Marshal(map[string]string{"type": "service_account", "client_email": "api@example.iam.gserviceaccount.com",
		"client_id": "1", "private_key_id": "k1", "token_uri": url,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "sa.json")
	require.NoError(t, os.WriteFile(file, sa, 0o600))
	return file
}

// TestAReadOnlyClientAsksForReadScopes: the API's client asks Google for
// the read-only events scope and free/busy; the worker's asks for events.
// (The API's router refuses writes before they reach a client:
// calendars' TestAReadOnlyRouterWritesNothing.)
func TestAReadOnlyClientAsksForReadScopes(t *testing.T) {
	t.Parallel()
	tokens := &tokenServer{}
	ts := httptest.NewServer(tokens)
	t.Cleanup(ts.Close)
	fake := gcaltest.NewCalendar()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	creds := serviceAccount(t, ts.URL)
	start := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	ctx := t.Context()

	for _, readOnly := range []bool{true, false} {
		m, err := gcal.New(ctx, gcal.Config{Endpoint: srv.URL + "/calendar/v3/", CredentialsFile: creds, ReadOnly: readOnly,
			CallTimeout: 5 * time.Second, Retry: retry.Policy{Attempts: 1}})
		require.NoError(t, err)
		_, err = m.FreeBusy(ctx, []string{agentCal}, start, start.Add(time.Hour))
		require.NoError(t, err)
	}
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	require.Len(t, tokens.scopes, 2)
	require.ElementsMatch(t, []string{"https://www.googleapis.com/auth/calendar.events.readonly", "https://www.googleapis.com/auth/calendar.freebusy"},
		strings.Fields(tokens.scopes[0]), "the read-only client's scopes")
	require.Contains(t, strings.Fields(tokens.scopes[1]), "https://www.googleapis.com/auth/calendar.events")
}
