package voice

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// guarded serves the API with the tools of cfg mounted over a Temporal
// nobody answers: a call that passes the keys, the limits and the
// platform's signature gets a 503 or a tool's not_done, one that does not
// gets the guard's own answer.
func guarded(t *testing.T, ec edge.Config, cfg Config) string {
	t.Helper()
	tc, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	sc := desk.New(tc, nil, desk.Options{}) // no store: every call fails at Temporal first
	ec.CallTimeout = 200 * time.Millisecond
	srv := edge.New(ec)
	srv.Mount(New(sc, srv.Settings(), cfg).Routes()...)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestRetellSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"name":"book"}`)
	sign := func(key string, at time.Time) string {
		ts := fmt.Sprint(at.UnixMilli())
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write(body)
		mac.Write([]byte(ts))
		return "v=" + ts + ",d=" + hex.EncodeToString(mac.Sum(nil))
	}
	require.True(t, signedOK(retellSigned(body, sign("key", now), "key", now)))
	require.False(t, signedOK(retellSigned(body, sign("other", now), "key", now)))
	require.False(t, signedOK(retellSigned(body, sign("key", now.Add(-time.Hour)), "key", now)), "stale")
	require.False(t, signedOK(retellSigned(append(body, ' '), sign("key", now), "key", now)), "body changed")
	require.False(t, signedOK(retellSigned(body, "", "key", now)))
}

// A Vapi HMAC credential with its documented defaults: x-signature, the hex
// HMAC-SHA256 of "{timestamp}.{body}", and x-timestamp.
func TestVapiHMACSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"message":{"type":"tool-calls","toolCalls":[]}}`)
	sign := func(secret, ts string, body []byte) string {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(body)))
		return hex.EncodeToString(mac.Sum(nil))
	}
	ms, s := fmt.Sprint(now.UnixMilli()), fmt.Sprint(now.Unix())
	require.True(t, vapiSigned(body, sign("k", ms, body), ms, "", "k", now), "milliseconds")
	require.True(t, vapiSigned(body, "sha256="+sign("k", s, body), s, "", "k", now), "seconds, with a prefix")
	require.False(t, vapiSigned(body, sign("other", ms, body), ms, "", "k", now), "another secret")
	stale := fmt.Sprint(now.Add(-10 * time.Minute).UnixMilli())
	require.False(t, vapiSigned(body, sign("k", stale, body), stale, "", "k", now), "a replay from ten minutes ago")
	require.False(t, vapiSigned(append(body, ' '), sign("k", ms, body), ms, "", "k", now), "body changed")
	require.False(t, vapiSigned(body, sign("k", ms, body), "", "", "k", now), "no timestamp")
}

// With messageIdHeader "x-message-id" and payloadFormat
// "{svix-id}.{timestamp}.{body}" (HmacAuthenticationPlan), Vapi signs
// the message's unique id too: the id a delivery carries is the one Vapi
// gave it, never stripped or swapped on the way.
func TestVapiHMACSignsTheMessageID(t *testing.T) {
	t.Parallel()
	body := []byte(`{"message":{"type":"tool-calls","toolCalls":[]}}`)
	ms := fmt.Sprint(now.UnixMilli())
	mac := hmac.New(sha256.New, []byte("k"))
	mac.Write([]byte("msg_2Zq." + ms + "." + string(body)))
	sig := hex.EncodeToString(mac.Sum(nil))
	require.True(t, vapiSigned(body, sig, ms, "msg_2Zq", "k", now))
	require.False(t, vapiSigned(body, sig, ms, "msg_other", "k", now), "another message's id")
	require.False(t, vapiSigned(body, sig, ms, "", "k", now), "the id stripped")
}

// The vector Retell's own SDK tests pin (retell-typescript-sdk v5.60.0,
// tests/webhook-auth.test.ts): the digest is HMAC-SHA256 of the body and
// the millisecond timestamp, with the API key.
func TestRetellSignatureAsTheSDKComputesIt(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":"call_ended"}`)
	const sig = "v=1700000000000,d=07024cabe7dd8f6d1c6e4a8324ca92c812e6ad4a7ee506c04f7e462e3321823e"
	at := time.UnixMilli(1700000000000)
	require.True(t, signedOK(retellSigned(body, sig, "test-api-key", at)))
	require.True(t, signedOK(retellSigned(body, sig, "test-api-key", at.Add(4*time.Minute))))
	require.False(t, signedOK(retellSigned(body, sig, "test-api-key", at.Add(6*time.Minute))), "older than five minutes")
	require.False(t, signedOK(retellSigned(body, sig, "other-key", at)))
	require.False(t, signedOK(retellSigned([]byte(`{"event":"call_started"}`), sig, "test-api-key", at)))
}

// A Vapi tool call through the endpoint, signed as a Vapi HMAC credential
// with its defaults signs it, gets in; unsigned, stale or altered, it
// does not.
func TestTheVapiEndpointChecksTheHMACCredential(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{}, Config{VapiHMACSecret: "vapi-secret"})
	// A tool this API does not have: answered without reaching Temporal.
	body := []byte(`{"message":{"type":"tool-calls","call":{"id":"call-1"},"toolCallList":[{"id":"tc-1","type":"function","function":{"name":"no_such_tool","arguments":"{}"}}]}}`)
	post := func(ts string, sig string, body []byte) int {
		req, err := http.NewRequest(http.MethodPost, url+"/v1/tools/vapi", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if ts != "" {
			req.Header.Set("x-timestamp", ts)
			req.Header.Set("x-signature", sig)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		return res.StatusCode
	}
	sign := func(ts string, body []byte) string {
		mac := hmac.New(sha256.New, []byte("vapi-secret"))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		return hex.EncodeToString(mac.Sum(nil))
	}
	now := fmt.Sprint(time.Now().UnixMilli())
	require.Equal(t, http.StatusOK, post(now, sign(now, body), body))
	require.Equal(t, http.StatusUnauthorized, post("", "", body), "unsigned")
	old := fmt.Sprint(time.Now().Add(-time.Hour).UnixMilli())
	require.Equal(t, http.StatusUnauthorized, post(old, sign(old, body), body), "replayed an hour later")
	require.Equal(t, http.StatusUnauthorized, post(now, sign(now, body), append([]byte(" "), body...)), "altered")
}

// signedOK is retellSigned's verdict alone.
func signedOK(_ string, ok bool) bool { return ok }
