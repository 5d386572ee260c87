package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/admission"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
)

// limited serves the tools with a bucket of ten and a clock that stands
// still, so that no token comes back during a test.
func limited(t *testing.T, cfg Config) string {
	t.Helper()
	return guarded(t, edge.Config{Limits: &ratelimit.Limits{PerSecond: 1, Burst: 10, RepeatWindow: time.Minute},
		Settings: edge.Settings{Now: func() time.Time { return now }}}, cfg)
}

// exchange sends body to url and decodes the answer into out; header
// is name, value pairs to send too.
func exchange(t *testing.T, url string, body []byte, out any, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	if out != nil && res.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(res.Body).Decode(out))
	}
	return res.StatusCode
}

// One Vapi message carrying thirty tool calls is thirty calls to the
// key's limit, not one: past the bucket's ten, each is answered not done
// (rate_limited) in Vapi's error field, and was never run.
func TestEveryToolCallOfAVapiMessageIsCharged(t *testing.T) {
	t.Parallel()
	url := limited(t, Config{})
	calls := make([]string, 30)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"id":"tc-%d","type":"function","function":{"name":"booking_status","arguments":{"request_key":"k-%d"}}}`, i, i)
	}
	body := `{"message":{"type":"tool-calls","call":{"id":"call-1"},"toolCallList":[` + strings.Join(calls, ",") + `]}}`
	var out vapiResults
	require.Equal(t, http.StatusOK, exchange(t, url+"/v1/tools/vapi", []byte(body), &out))
	require.Len(t, out.Results, 30)
	refused := 0
	for _, r := range out.Results {
		if strings.Contains(r.Error, "over its limit") {
			refused++
		}
	}
	require.Equal(t, 20, refused, "ten calls run, the rest refused: %+v", out.Results)
}

// mcpCall is one tools/call request.
func mcpCall(id int, tool, args string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// A read repeated costs every time (it asks the store again); a booking
// call repeated is free (it lands on the same saga by its key). Over MCP,
// a refused call is its tool's result, isError, naming the limit.
func TestARepeatedReadIsChargedAndARepeatedWriteIsFree(t *testing.T) {
	t.Parallel()
	url := limited(t, Config{})
	type rpc struct {
		Result struct {
			IsError           bool       `json:"isError"`
			StructuredContent ToolResult `json:"structuredContent"`
		} `json:"result"`
	}
	count := func(tool, args string) (limited int) {
		for i := range 15 {
			var out rpc
			require.Equal(t, http.StatusOK, exchange(t, url+"/v1/mcp", mcpCall(i, tool, args), &out, "X-Call-Id", "call-1"))
			if out.Result.StructuredContent.Code == "rate_limited" {
				require.True(t, out.Result.IsError)
				limited++
			}
		}
		return limited
	}
	book := `{"request_key":"k-1","property_id":"paris-11","agent_id":"agent-00","time_zone":"Europe/Paris","local_start":"2026-12-08T10:00","expected_policy_version":"p1","conversation_id":"cv-00000000000000000000000000000000"}`
	require.Zero(t, count("book", book), "fifteen copies of one booking call cost one token")
	require.Equal(t, 6, count("booking_status", `{"request_key":"k-1"}`), "nine tokens were left: the sixth repeat on is refused")
}

// Every tool call takes a place under the process's admission, reads
// included: past the limit a call is answered at capacity and not run,
// with a line the agent can say at once, and a place given back admits
// the next.
func TestTheGateHoldsEveryTool(t *testing.T) {
	t.Parallel()
	tools := New(nil, edge.Settings{Admission: admission.New(admission.Config{Max: 2, Min: 2})}, Config{})
	ctx := context.Background()
	var done []func()
	for _, name := range []string{"check_availability", "find_booking"} {
		d, refused := tools.admit(ctx, name, "call-1", nil)
		require.Nil(t, refused, name)
		done = append(done, d)
	}
	_, refused := tools.admit(ctx, "property_info", "call-1", nil)
	require.NotNil(t, refused, "a third read at once")
	require.Equal(t, string(booking.CodeUnavailable), refused.Code)
	require.Contains(t, refused.Line, "at capacity")
	require.Contains(t, refused.Line, `Say "One moment, I'll try that again"`)
	done[0]()
	d, refused := tools.admit(ctx, "book", "call-1", nil)
	require.Nil(t, refused, "a place given back")
	d()
	done[1]()
}

// The edge charges a tools/call as the SDK reads it, however the body is
// spelled: a byte after the JSON value, a second "method" key, a key
// whose case the SDK does not match. Each is a read repeated fifteen
// times on ten tokens: the eleventh on is refused, as for the plain call.
func TestAToolCallIsChargedHoweverItsBodyIsSpelled(t *testing.T) {
	t.Parallel()
	plain := string(mcpCall(1, "booking_status", `{"request_key":"k-1"}`))
	params := strings.TrimPrefix(plain, `{"jsonrpc":"2.0","id":1,"method":"tools/call",`)
	for name, body := range map[string]string{
		"trailing byte":  plain + "x",
		"second method":  `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call",` + params,
		"method by case": `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping",` + params,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := limited(t, Config{})
			limited := 0
			for range 15 {
				var out struct {
					Result struct {
						StructuredContent ToolResult `json:"structuredContent"`
					} `json:"result"`
				}
				require.Equal(t, http.StatusOK, exchange(t, url+"/v1/mcp", []byte(body), &out, "X-Call-Id", "call-1"), "the SDK runs it")
				if out.Result.StructuredContent.Code == "rate_limited" {
					limited++
				}
			}
			require.Equal(t, 5, limited)
		})
	}
}

// A write sent again without conversation_id is a new conversation each
// time, and each one costs a unit: fifteen on ten tokens, the tenth on
// refused (the first costs two: the call and its conversation).
func TestAMintedConversationCostsAUnit(t *testing.T) {
	t.Parallel()
	url := limited(t, Config{})
	limited := 0
	for i := range 15 {
		var out struct {
			Result struct {
				StructuredContent ToolResult `json:"structuredContent"`
			} `json:"result"`
		}
		require.Equal(t, http.StatusOK, exchange(t, url+"/v1/mcp", mcpCall(i, "request_human", `{"topic":"other","reason":"a question"}`), &out))
		if out.Result.StructuredContent.Code == "rate_limited" {
			limited++
		}
	}
	require.Equal(t, 6, limited)
}
