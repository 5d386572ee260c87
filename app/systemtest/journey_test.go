package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api/voice"
)

// caller sends one tool call of a call on one platform and returns the
// line it answered.
type caller func(tool string, args map[string]any) string

var toolKey = regexp.MustCompile(`request_key (?:is )?([0-9a-f-]{36})`)

// journey is a caller's whole call: availability, a choice, the booking,
// its status, a move and a cancel, at hour on the fixture's day. It
// returns each answer's [status] and the two keys.
func journey(t *testing.T, call caller, hour int) (tags []string, first, moved string) {
	t.Helper()
	start := slot(t, hour)
	local := func(at time.Time) string { return at.In(parisZone(t)).Format("2006-01-02T15:04") }
	where := func(extra map[string]any) map[string]any {
		out := map[string]any{"property_id": "paris-11", "agent_id": "agent-00", "time_zone": "Europe/Paris", "duration_minutes": 30}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tag := func(line string) string {
		end := strings.Index(line, "]")
		require.True(t, strings.HasPrefix(line, "[") && end > 0, line)
		return line[1:end]
	}
	steps := []struct {
		tool string
		args func() map[string]any
	}{
		{"check_availability", func() map[string]any { return where(map[string]any{"date": local(start)[:10]}) }},
		{"select_slot", func() map[string]any { return where(map[string]any{"local_start": local(start)}) }},
		{"book", func() map[string]any {
			return where(map[string]any{"local_start": local(start), "expected_policy_version": policyVersion})
		}},
		{"booking_status", func() map[string]any { return map[string]any{"request_key": first} }},
		{"reschedule_booking", func() map[string]any {
			return map[string]any{"request_key": first, "local_start": local(start.Add(time.Hour))}
		}},
		{"booking_status", func() map[string]any { return map[string]any{"request_key": first} }},
		{"cancel_booking", func() map[string]any { return map[string]any{"request_key": moved} }},
	}
	for _, st := range steps {
		line := call(st.tool, st.args())
		tags = append(tags, tag(line))
		if m := toolKey.FindStringSubmatch(line); m != nil {
			switch st.tool {
			case "select_slot":
				first = m[1]
			case "booking_status":
				moved = m[1]
			}
		}
	}
	return tags, first, moved
}

// The same call over MCP, Retell and Vapi ends the same in the store:
// the same answers, the first booking moved, the new one cancelled.
func TestTheSameJourneyOverEveryPlatform(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key", VapiSecret: "vapi-secret"}})
	platforms := map[string]func(callID string) caller{
		"mcp": func(callID string) caller {
			return func(tool string, args map[string]any) string {
				res, _ := f.mcpCall(url, callID, tool, args)
				return res.Content[0].(*mcp.TextContent).Text
			}
		},
		"retell": func(callID string) caller {
			return func(tool string, args map[string]any) string { return f.retellTool(url, callID, tool, args) }
		},
		"vapi": func(callID string) caller {
			return func(tool string, args map[string]any) string {
				var out vapiAnswer
				require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/tools/vapi", vapiToolCalls(callID, "tc-"+uuid.NewString(), tool, args), &out,
					"X-Vapi-Secret", "vapi-secret"))
				return out.Results[0].Result + out.Results[0].Error
			}
		},
	}
	var want []string
	for i, name := range []string{"mcp", "retell", "vapi"} {
		tags, first, moved := journey(t, platforms[name]("call-"+uuid.NewString()), 9+3*i)
		if want == nil {
			want = tags
			require.Equal(t, []string{"offered", "selected", "confirmed", "confirmed", "confirmed", "rescheduled", "cancelled"}, tags)
		}
		require.Equal(t, want, tags, name)
		require.Equal(t, "released_for_reschedule", f.storeStatus(first), name)
		require.Equal(t, "cancelled", f.storeStatus(moved), name)
	}
	require.Equal(t, 6, f.bookings(), "two bookings a platform")
}

// storeStatus is the store's status of key's booking.
func (f *fixture) storeStatus(key string) string {
	f.t.Helper()
	var status string
	require.NoError(f.t, f.pool.QueryRow(f.ctx, `SELECT status FROM booking WHERE request_key = $1`, key).Scan(&status), key)
	return status
}
