package voice

import (
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The keys of tools/call's _meta that name the call. ElevenLabs sends
// per-call values there (its MCP server's request_meta, each resolved
// from a dynamic variable for every call), where other platforms set
// headers: docs/connect.md gives the setting.
const (
	metaCallID       = "call_id"
	metaCallerNumber = "caller_number"
)

// mcpCallOf is the call an MCP tool call names: its id from X-Call-Id,
// else _meta's call_id; its caller number from X-Caller-Number, else
// _meta's caller_number, caller ID only where the deployment declares
// MCP platform-fronted (either is the agent's word otherwise). A call
// named two ways is refused: which one the bookings belong to would be
// a guess.
func (t *Tools) mcpCallOf(req *mcp.CallToolRequest) (platformCall, *Answer) {
	var header http.Header
	if req.Extra != nil {
		header = req.Extra.Header
	}
	meta := req.Params.GetMeta()
	id := strings.TrimSpace(header.Get("X-Call-Id"))
	inMeta, bad := metaString(meta, metaCallID)
	if bad != nil {
		return platformCall{}, bad
	}
	switch {
	case inMeta == "":
	case id == "":
		id = inMeta
	case id != inMeta:
		a := notDone(booking.CodeInvalidConversationID, "X-Call-Id and _meta.call_id name two different calls: send the call's id in one of them")
		return platformCall{}, &a
	}
	number := t.headerCallerID("mcp", header)
	if number == "" && t.fronted("mcp") {
		if number, bad = metaString(meta, metaCallerNumber); bad != nil {
			return platformCall{}, bad
		}
	}
	return callOf(id, number), nil
}

// metaString is _meta's value under key: "" where there is none, a
// refusal where it is not a string.
func metaString(meta map[string]any, key string) (string, *Answer) {
	v, ok := meta[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		a := notDone(booking.CodeBadJSON, "_meta."+key+" must be a string")
		return "", &a
	}
	return strings.TrimSpace(s), nil
}

// fronted reports whether the deployment declares route fronted by a
// platform that sets caller ID itself (Config.CallerIDHeader).
func (t *Tools) fronted(route string) bool {
	return slices.Contains(t.cfg.CallerIDHeader, route)
}
