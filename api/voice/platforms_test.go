package voice

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
)

// retellSignature signs body as Retell does: v=<unix ms>,d=<hex HMAC>.
func retellSignature(body []byte, key string, at time.Time) string {
	ts := fmt.Sprint(at.UnixMilli())
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	mac.Write([]byte(ts))
	return "v=" + ts + ",d=" + hex.EncodeToString(mac.Sum(nil))
}

func post(t *testing.T, url string, body []byte, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode
}

// TestUnsignedCallsDoNotDrainThePlatformsLimit: a flood of unsigned or
// wrongly signed tool calls is refused as unauthorized, and the platform's
// own signed calls still get through.
func TestUnsignedCallsDoNotDrainThePlatformsLimit(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{Limits: &ratelimit.Limits{PerSecond: 1, Burst: 2, RepeatWindow: time.Minute}},
		Config{RetellKey: "retell-key", VapiSecret: "vapi-secret"})
	for i := range 20 {
		body := fmt.Appendf(nil, `{"name":"no_such_tool","call":{"call_id":"c-%d"},"args":{}}`, i)
		require.Equal(t, http.StatusUnauthorized, post(t, url+"/v1/tools/retell", body, "X-Retell-Signature", "v=1,d=00"))
		require.Equal(t, http.StatusUnauthorized, post(t, url+"/v1/tools/vapi", body, "X-Vapi-Secret", "guess"))
	}
	body := []byte(`{"name":"no_such_tool","call":{"call_id":"c-real"},"args":{}}`)
	require.Equal(t, http.StatusOK, post(t, url+"/v1/tools/retell", body, "X-Retell-Signature", retellSignature(body, "retell-key", time.Now())))
	vapi := []byte(`{"message":{"type":"tool-calls","call":{"id":"call-1"},"toolCallList":[{"id":"tc-1","type":"function","function":{"name":"no_such_tool","arguments":"{}"}}]}}`)
	require.Equal(t, http.StatusOK, post(t, url+"/v1/tools/vapi", vapi, "X-Vapi-Secret", "vapi-secret"))
}

// TestAnArgsOnlyBodyCannotBeReplayedElsewhere: in Retell's "args only"
// mode the signature covers the arguments alone, so a captured call could
// be sent again to another tool or under another call. The signature is
// bound to the tool and call it first came with; the same call resent as
// it was still gets in.
func TestAnArgsOnlyBodyCannotBeReplayedElsewhere(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{}, Config{RetellKey: "retell-key"})
	args := []byte(`{"request_key":"k-1"}`)
	sig := retellSignature(args, "retell-key", time.Now())
	// Tools this API does not have are answered without reaching Temporal.
	require.Equal(t, http.StatusOK, post(t, url+"/v1/tools/retell/no_such_tool", args, "X-Retell-Signature", sig, "X-Call-Id", "call-a"))
	require.Equal(t, http.StatusOK, post(t, url+"/v1/tools/retell/no_such_tool", args, "X-Retell-Signature", sig, "X-Call-Id", "call-a"),
		"the platform resending the same call")
	require.Equal(t, http.StatusUnauthorized, post(t, url+"/v1/tools/retell/no_such_tool", args, "X-Retell-Signature", sig, "X-Call-Id", "call-b"),
		"replayed under another call")
	require.Equal(t, http.StatusUnauthorized, post(t, url+"/v1/tools/retell/other_tool", args, "X-Retell-Signature", sig, "X-Call-Id", "call-a"),
		"replayed to another tool")
	// The same signature spelled otherwise (its parts swapped, its hex in
	// capitals, a space) is the same signature (L1).
	ts, digest, _ := strings.Cut(strings.TrimPrefix(sig, "v="), ",d=")
	for _, spelled := range []string{"d=" + digest + ",v=" + ts, "v=" + ts + ",d=" + strings.ToUpper(digest), "v=" + ts + ", d=" + digest} {
		require.Equal(t, http.StatusUnauthorized, post(t, url+"/v1/tools/retell/other_tool", args, "X-Retell-Signature", spelled, "X-Call-Id", "call-a"),
			"replayed to another tool as %q", spelled)
	}
}

// TestAVapiCallThatFailedForNowIsItsErrorField: a call that did nothing
// because a dependency is down goes in Vapi's error field, still HTTP 200
// as Vapi requires, and says to try the same call again.
func TestAVapiCallThatFailedForNowIsItsErrorField(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{}, Config{VapiSecret: "vapi-secret"}) // Temporal unreachable
	body := []byte(`{"message":{"type":"tool-calls","call":{"id":"call-1"},"toolCallList":[{"id":"tc-1","type":"function",` +
		`"function":{"name":"booking_status","arguments":{"request_key":"k-1"}}}]}}`)
	req, err := http.NewRequest(http.MethodPost, url+"/v1/tools/vapi", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Vapi-Secret", "vapi-secret")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out struct {
		Results []struct {
			ToolCallID string `json:"toolCallId"`
			Result     string `json:"result"`
			Error      string `json:"error"`
		} `json:"results"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Len(t, out.Results, 1)
	require.Equal(t, "tc-1", out.Results[0].ToolCallID)
	require.Empty(t, out.Results[0].Result)
	require.True(t, strings.HasPrefix(out.Results[0].Error, "[not_done: temporarily_unavailable]"), out.Results[0].Error)
}

// A Vapi bearer credential (BearerAuthenticationPlan in Vapi's OpenAPI)
// sends "Bearer <token>" unless bearerPrefixEnabled is false, in the header
// headerName names: the secret is taken either way, and nothing else is.
func TestTheVapiSecretIsTakenWithOrWithoutItsBearerPrefix(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{}, Config{VapiSecret: "vapi-secret"}) + "/v1/tools/vapi"
	body := []byte(`{"message":{"type":"tool-calls","call":{"id":"call-1"},"toolCallList":[{"id":"tc-1","type":"function","function":{"name":"no_such_tool","arguments":"{}"}}]}}`)
	require.Equal(t, http.StatusOK, post(t, url, body, "X-Vapi-Secret", "Bearer vapi-secret"), "Vapi's default, bearerPrefixEnabled true")
	require.Equal(t, http.StatusOK, post(t, url, body, "X-Vapi-Secret", "vapi-secret"), "bearerPrefixEnabled false")
	require.Equal(t, http.StatusUnauthorized, post(t, url, body, "X-Vapi-Secret", "Bearer other"))
	require.Equal(t, http.StatusUnauthorized, post(t, url, body, "X-Vapi-Secret", "Bearervapi-secret"))
	require.Equal(t, http.StatusUnauthorized, post(t, url, body))
}

// A JSON-RPC batch is refused on /v1/mcp (the current MCP spec has none,
// and the SDK takes one for the older versions it negotiates, each call
// run at once): otherwise one request, charged once to the key's limit,
// could carry hundreds of tool calls.
func TestAnMCPBatchIsRefused(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{}, Config{}) + "/v1/mcp"
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"no_such_tool","arguments":{"conversation_id":"c-1"}}}`, id)
	}
	batch := []byte("[" + call(1) + "," + call(2) + "]")
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(batch))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, string(raw))
	var answer struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &answer), string(raw))
	require.Equal(t, -32600, answer.Error.Code, "JSON-RPC's invalid request")
	require.Contains(t, answer.Error.Message, "batch")
}

// panicking is a saga client whose every call panics.
type panicking struct{ Sagas }

func (panicking) Made(context.Context, string, string) (bool, error) { panic("the saga client broke") }

// A panic in a tool call is answered, logged and survived: the MCP SDK
// runs a tool in a goroutine of its own, where a panic took the whole API
// process down. The caller hears "not done, try again", and the next call
// is served.
func TestAPanicInAToolCallIsAnswered(t *testing.T) {
	t.Parallel()
	srv := edge.New(edge.Config{})
	srv.Mount(New(panicking{}, srv.Settings(), Config{}).Routes()...)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_booking","arguments":{"request_key":"k-1"}}}`)
	for range 2 {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/mcp", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Call-Id", "call-1")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "the connection is answered, not dropped")
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, http.StatusOK, res.StatusCode, string(raw))
		require.Contains(t, string(raw), "[not_done: temporarily_unavailable]")
		require.Contains(t, string(raw), `"isError":true`)
	}
}
