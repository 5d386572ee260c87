package systemtest

import (
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api/voice"
)

// elevenLabsCall calls a tool over MCP as an ElevenLabs agent's MCP
// server sends it with request_meta set as docs/connect.md says:
// {"call_id": {"variable_name": "system__conversation_id"},
// "caller_number": {"variable_name": "system__caller_id"}}, resolved per
// call into tools/call's _meta. header adds headers beside the bearer key.
func (f *fixture) elevenLabsCall(url string, meta mcp.Meta, header map[string]string, tool string, args map[string]any) voice.ToolResult {
	f.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + apiKey}
	for k, v := range header {
		h[k] = v
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "elevenlabs", Version: "1"}, nil)
	sess, err := c.Connect(f.ctx, &mcp.StreamableClientTransport{Endpoint: url + "/v1/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: withHeaders{base: http.DefaultTransport, header: h}}}, nil)
	require.NoError(f.t, err)
	defer sess.Close()
	res, err := sess.CallTool(f.ctx, &mcp.CallToolParams{Meta: meta, Name: tool, Arguments: args})
	require.NoError(f.t, err)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(f.t, err)
	var out voice.ToolResult
	require.NoError(f.t, json.Unmarshal(raw, &out))
	require.True(f.t, strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "["+out.Status))
	return out
}

// ElevenLabs sends the conversation's id and the caller's number in the
// MCP request's _meta (its MCP server's request_meta): the id names the
// conversation as X-Call-Id does, so a re-sent book lands on one
// booking with no conversation_id for the model to carry; the number is
// caller ID only where the deployment declares MCP platform-fronted; an
// id in _meta that disagrees with X-Call-Id is refused, writing nothing.
func TestElevenLabsNamesTheCallInRequestMeta(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, ref := f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")

	conv := mcp.Meta{"call_id": "conv_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:26]}
	args := bookArgs(t, 12)
	var keys []string
	for range 2 {
		out := f.elevenLabsCall(url, conv, nil, "book", args)
		require.Equal(t, "confirmed", out.Status, out.Line)
		require.Empty(t, out.ConversationID, "the platform named the call: nothing minted for the model to carry")
		keys = append(keys, out.RequestKey)
	}
	require.Equal(t, keys[0], keys[1], "one call, one intent, one key")
	require.Equal(t, 2, f.bookings())

	withNumber := mcp.Meta{"call_id": "conv_" + uuid.NewString(), "caller_number": "+33612345678"}
	found := f.elevenLabsCall(url, withNumber, nil, "find_booking", map[string]any{"name": "Marie Dupont"})
	require.Equal(t, "found", found.Status, found.Line)
	require.NotContains(t, found.Line, ref, "caller ID finds, it does not unlock")

	plain := f.serveAPI(app.EdgeConfig{})
	notCallerID := f.elevenLabsCall(plain, withNumber, nil, "find_booking", map[string]any{"name": "Marie Dupont"})
	require.Equal(t, "missing_field", notCallerID.Code, "MCP not declared platform-fronted: _meta's number is the agent's word, not caller ID: %s", notCallerID.Line)

	clash := f.elevenLabsCall(url, mcp.Meta{"call_id": "conv_a"}, map[string]string{"X-Call-Id": "conv_b"}, "book", bookArgs(t, 14))
	require.Equal(t, "invalid_conversation_id", clash.Code, clash.Line)
	require.Equal(t, 2, f.bookings(), "a call named two ways writes nothing")
}
