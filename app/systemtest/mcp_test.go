package systemtest

import (
	"context"
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// withHeaders sets fixed headers on every request, as a voice platform's
// MCP settings do (a bearer key, the call's id).
type withHeaders struct {
	base   http.RoundTripper
	header map[string]string
}

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// mcpSession opens a new MCP session with the SDK's own client, as Vapi
// does for each tool call; callID "" sends no X-Call-Id.
func (f *fixture) mcpSession(url, callID string) *mcp.ClientSession {
	f.t.Helper()
	return f.mcpSessionAs(url, apiKey, callID)
}

// mcpSessionAs is mcpSession under another API key.
func (f *fixture) mcpSessionAs(url, key, callID string) *mcp.ClientSession {
	f.t.Helper()
	return openMCP(f.t, f.ctx, url, key, callID)
}

// openMCP opens an MCP session on the API at url under key, with the
// call's id in X-Call-Id unless it is "".
func openMCP(t testing.TB, ctx context.Context, url, key, callID string) *mcp.ClientSession {
	t.Helper()
	header := map[string]string{"Authorization": "Bearer " + key}
	if callID != "" {
		header["X-Call-Id"] = callID
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/v1/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: withHeaders{base: http.DefaultTransport, header: header}}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// mcpCall calls a tool in a new session and returns its text and
// structured result.
func (f *fixture) mcpCall(url, callID, tool string, args map[string]any) (*mcp.CallToolResult, voice.ToolResult) {
	f.t.Helper()
	return f.mcpCallAs(url, apiKey, callID, tool, args)
}

// mcpCallAs is mcpCall under another API key.
func (f *fixture) mcpCallAs(url, key, callID, tool string, args map[string]any) (*mcp.CallToolResult, voice.ToolResult) {
	f.t.Helper()
	sess := f.mcpSessionAs(url, key, callID)
	res, err := sess.CallTool(f.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(f.t, err)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(f.t, err)
	f.matchesOutputSchema(sess, tool, raw)
	var out voice.ToolResult
	require.NoError(f.t, json.Unmarshal(raw, &out))
	require.Len(f.t, res.Content, 1)
	text := res.Content[0].(*mcp.TextContent).Text
	require.True(f.t, strings.HasPrefix(text, "["+out.Status), "the text starts with its [status]: %s", text)
	return res, out
}

// matchesOutputSchema requires that raw, a result's structuredContent,
// is valid under the output schema tools/list gives the tool.
func (f *fixture) matchesOutputSchema(sess *mcp.ClientSession, tool string, raw []byte) {
	f.t.Helper()
	list, err := sess.ListTools(f.ctx, nil)
	require.NoError(f.t, err)
	for _, d := range list.Tools {
		if d.Name != tool {
			continue
		}
		schemaJSON, err := json.Marshal(d.OutputSchema)
		require.NoError(f.t, err)
		var schema jsonschema.Schema
		require.NoError(f.t, json.Unmarshal(schemaJSON, &schema))
		resolved, err := schema.Resolve(nil)
		require.NoError(f.t, err)
		var instance any
		require.NoError(f.t, json.Unmarshal(raw, &instance))
		require.NoError(f.t, resolved.Validate(instance), "%s's structuredContent: %s", tool, raw)
		return
	}
	f.t.Fatalf("tools/list has no %s", tool)
}

// exportedTool is one tool of GET /v1/tools/vapi/tools.
type exportedTool struct {
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// tools/list is the one definition: what the Vapi export has, with
// schemas for what each result holds and hints for what it does.
func TestMCPListsTheToolsOfTheOneDefinition(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	var vapi struct {
		Tools []exportedTool `json:"tools"`
	}
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/tools/vapi/tools", nil, &vapi))
	list, err := f.mcpSession(url, "").ListTools(f.ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, len(vapi.Tools))
	for i, tool := range list.Tools {
		// MCP lists by name.
		idx := slices.IndexFunc(vapi.Tools, func(v exportedTool) bool { return v.Function.Name == tool.Name })
		require.GreaterOrEqual(t, idx, 0, "tool %d, %s, is not in the Vapi export", i, tool.Name)
		want := vapi.Tools[idx].Function
		require.Equal(t, want.Description, tool.Description)
		got, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		wantSchema, err := json.Marshal(want.Parameters)
		require.NoError(t, err)
		require.JSONEq(t, string(wantSchema), string(got), tool.Name)
		require.NotNil(t, tool.OutputSchema, tool.Name)
		require.False(t, *tool.Annotations.OpenWorldHint, tool.Name)
		a := tool.Annotations
		switch tool.Name {
		case "check_availability", "booking_status", "property_info":
			require.True(t, a.ReadOnlyHint, tool.Name)
		case "select_slot", "book", "find_booking", "request_human":
			require.False(t, a.ReadOnlyHint, tool.Name)
			require.True(t, a.IdempotentHint, tool.Name)
			require.False(t, *a.DestructiveHint, "%s only adds", tool.Name)
		case "cancel_booking", "reschedule_booking":
			require.False(t, a.ReadOnlyHint, tool.Name)
			require.True(t, a.IdempotentHint, tool.Name)
			require.True(t, *a.DestructiveHint, "%s lets a booking go", tool.Name)
		default:
			t.Fatalf("%s: hints not checked", tool.Name)
		}
	}
}

// book sent again in new sessions of the same call, and five times at
// once, makes one booking; a conflict is an ordinary result.
func TestMCPBookIsIdempotentPerCall(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	call := "call-" + uuid.NewString()
	args := bookArgs(t, 10)
	var keys []string
	for range 2 {
		res, out := f.mcpCall(url, call, "book", args)
		require.False(t, res.IsError)
		require.Equal(t, "confirmed", out.Status, out.Line)
		require.Equal(t, receipt.StatusConfirmed, out.Receipt.Status)
		keys = append(keys, out.RequestKey)
	}
	require.Equal(t, keys[0], keys[1], "one key for the one intent")

	other := "call-" + uuid.NewString()
	many := bookArgs(t, 12)
	var wg sync.WaitGroup
	statuses := make([]string, 5)
	for i := range statuses {
		wg.Go(func() {
			_, out := f.mcpCall(url, other, "book", many)
			statuses[i] = out.Status
		})
	}
	wg.Wait()
	require.Equal(t, []string{"confirmed", "confirmed", "confirmed", "confirmed", "confirmed"}, statuses)
	require.Equal(t, 2, f.bookings())

	res, out := f.mcpCall(url, "call-"+uuid.NewString(), "book", args)
	require.False(t, res.IsError, "a conflict is an answer, not an error")
	require.Equal(t, "conflict", out.Status, out.Line)
	stale := bookArgs(t, 13)
	stale["expected_policy_version"] = "an-older-policy"
	res, out = f.mcpCall(url, "call-"+uuid.NewString(), "book", stale)
	require.False(t, res.IsError, "a refusal is an answer, not an error")
	require.Equal(t, "rejected", out.Status, out.Line)
	require.Equal(t, 2, f.bookings())

	// No X-Call-Id: the service mints the conversation on the first call,
	// and later calls send its id back.
	first, out := f.mcpCall(url, "", "select_slot", bookArgs(t, 14))
	require.False(t, first.IsError, out.Line)
	require.Regexp(t, `^cv-[0-9a-f]{32}$`, out.ConversationID)
	require.Contains(t, out.Line, "conversation_id is "+out.ConversationID)
	withConv := bookArgs(t, 14)
	withConv["conversation_id"] = out.ConversationID
	chosen := out.RequestKey
	_, out = f.mcpCall(url, "", "book", withConv)
	require.Equal(t, "confirmed", out.Status, out.Line)
	require.Equal(t, chosen, out.RequestKey, "the same conversation: the key its choice was given")
	require.Equal(t, 3, f.bookings())
}

// TestAModelSuppliedConversationIsNeverShared: where only the model names
// the conversation, an id bookingsaga did not mint (the README's own
// call-1, one a caller tells the model) is refused, so two callers whose
// models say the same id never share a conversation: the second never
// hears the first's confirmation and can't touch the first's booking.
// A minted id works only under the key it was minted for.
func TestAModelSuppliedConversationIsNeverShared(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	args := bookArgs(t, 10)
	args["conversation_id"] = "call-1"
	res, out := f.mcpCall(url, "", "book", args)
	require.True(t, res.IsError)
	require.Equal(t, "invalid_conversation_id", out.Code, out.Line)
	require.Zero(t, f.bookings(), "nothing booked under an id the service never gave")

	_, first := f.mcpCall(url, "", "book", bookArgs(t, 10))
	require.Equal(t, "confirmed", first.Status, first.Line)
	// The second caller's model says the first's id (and its booking's key).
	stolen := map[string]any{"conversation_id": first.ConversationID, "request_key": first.RequestKey}
	other, keys := agentKey(t, "other-agent")
	otherURL := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: keys}})
	res, out = f.mcpCallAs(otherURL, other, "", "cancel_booking", stolen)
	require.True(t, res.IsError)
	require.Equal(t, "invalid_conversation_id", out.Code, "another key can't use the id: %s", out.Line)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, first.RequestKey).Status, "the first caller's booking stands")
	_, out = f.mcpCallAs(otherURL, other, "", "book", bookArgs(t, 10))
	require.Equal(t, "conflict", out.Status, "the second caller's own conversation: the slot is taken, never [confirmed]")
}

// A pending booking holds the call on MCP as on every entry point.
func TestMCPWaitsForTheCallsPendingBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	sc := f.sagas()
	call := "call-" + uuid.NewString()
	first, err := sc.Choose(f.ctx, scoped(call), commitRequest(slot(t, 10)).Intent, true) // a book on its way
	require.NoError(t, err)
	res, out := f.mcpCall(url, call, "book", bookArgs(t, 11))
	require.False(t, res.IsError)
	require.Equal(t, "pending_reconciliation", out.Status, out.Line)
	require.Equal(t, first.RequestKey, out.RequestKey)
	require.Zero(t, f.bookings())
}

// Without a key, or with a key that may not act as an agent, /v1/mcp
// answers nothing.
func TestMCPNeedsAnAgentKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	path := filepath.Join(t.TempDir(), "keys.json")
	secrets := map[apikey.Scope]string{}
	for _, scope := range []apikey.Scope{apikey.ScopeAgent, apikey.ScopeOps} {
		secret, k, err := apikey.NewKey(string(scope), scope)
		require.NoError(t, err)
		require.NoError(t, apikey.SaveKey(path, k, false))
		secrets[scope] = secret
	}
	keys, err := apikey.LoadKeyring(path)
	require.NoError(t, err)
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: keys}}) + "/v1/mcp"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for auth, want := range map[string]int{"": http.StatusUnauthorized, "Bearer " + secrets[apikey.ScopeOps]: http.StatusForbidden,
		"Bearer " + secrets[apikey.ScopeAgent]: http.StatusOK} {
		req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, url, strings.NewReader(initialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		// Behind a reverse proxy: a public Host on a loopback address.
		req.Host = "bookings.example.test"
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, want, res.StatusCode, "auth %q", auth)
	}
}

// The server speaks the current spec (2026-07-28: server/discover, the
// version on every request) and the older versions the SDK negotiates
// (the initialize handshake, answered in the version asked for).
func TestMCPNegotiatesTheProtocolVersion(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{}) + "/v1/mcp"
	post := func(version, body string, out any) string {
		req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("MCP-Protocol-Version", version)
		if version >= "2026-07-28" { // the method rides in a header too, for proxies to route on
			req.Header.Set("Mcp-Method", "server/discover")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
		return string(raw)
	}
	var discovered struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
			Instructions      string   `json:"instructions"`
		} `json:"result"`
	}
	raw := post("2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`,
		&discovered)
	require.Equal(t, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, discovered.Result.SupportedVersions, raw)
	require.Contains(t, discovered.Result.Instructions, "[confirmed]", "the system prompt's rule comes with the server")

	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		var out struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
				ServerInfo      struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
			} `json:"result"`
		}
		post(version, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+
			`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, &out)
		require.Equal(t, version, out.Result.ProtocolVersion)
		require.Equal(t, "bookingsaga", out.Result.ServerInfo.Name)
	}
}
