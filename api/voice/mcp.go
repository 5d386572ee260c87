package voice

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The voice tools as a Model Context Protocol server (POST /v1/mcp):
// Streamable HTTP through the official Go SDK, which speaks the spec of
// 2026-07-28 and negotiates the older versions it supports. Every call
// goes through the same handlers as /v1/tools/*, from the same
// definitions (tooldefs.go).
//
// It is stateless: Vapi opens a new MCP session for every tool call, and
// an API behind a load balancer may never see the same session twice, so
// nothing hangs on one. The conversation, which keys the request_key,
// comes from the X-Call-Id header (or, from ElevenLabs, tools/call's
// _meta: mcpcall.go), else the conversation_id argument.
// MCP's JSON-RPC id is never an idempotency key (a client re-issues it
// on a broken stream): the server-minted request_key stays the handle.

// mcpHandler serves the tools over MCP.
func (t *Tools) mcpHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bookingsaga", Title: "Property viewing bookings", Version: "1"},
		&mcp.ServerOptions{Instructions: SystemPrompts[t.set.Language]})
	for _, d := range toolDefs {
		srv.AddTool(d.mcpTool(), t.mcpCall(d.name))
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK refuses a request that reaches a loopback address with
		// another Host: the guard against a browser page rebinding a DNS
		// name onto a local server with no auth. Here every call needs an
		// agent key (a browser page has none), and a reverse proxy on the
		// same host forwards with the public Host, which the guard would
		// refuse.
		DisableLocalhostProtection: true,
	})
}

func (t *Tools) mcp(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return unread(r, body, edge.BadRequest(booking.CodeBodyTooLarge, "the body is over the API's limit"))
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		// The current MCP spec has no batches; the SDK still takes one for
		// the older versions it negotiates and runs its calls at once, so
		// one request could carry hundreds of tool calls past the gate.
		// Refused, as JSON-RPC refuses a request it will not take, and
		// charged once.
		if e := edge.Charge(r.Context(), body, false); e != nil {
			return e
		}
		return edge.WriteJSON(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32600, "message": "JSON-RPC batches are not served: send one request per call"}})
	}
	// The SDK decides what the body is; the edge charges what it runs,
	// as it reads it: a tool call in its handler (mcpCall), anything
	// else (initialize, tools/list, a notification, a body it refuses)
	// once it has answered.
	var charged atomic.Bool
	r = r.WithContext(context.WithValue(r.Context(), chargedKey{}, &charged))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Header.Set(callerHeader, edge.Caller(r.Context()))
	t.mcpServer.ServeHTTP(w, r)
	if !charged.Load() {
		_ = edge.Charge(r.Context(), body, true) // answered already: it counts against the next
	}
	return nil
}

// chargedKey marks, in an MCP request's context, whether one of its tool
// calls was charged.
type chargedKey struct{}

// callerHeader carries, from the HTTP request to the SDK's tool
// handler, the key the request came in under; the edge sets it, over
// whatever a client sent.
const callerHeader = "X-Bookingsaga-Caller"

// mcpCall runs one tools/call. Refusals, conflicts, pending outcomes and
// questions for the caller are ordinary results, worded from their
// [status]; only a call that did nothing and asks nothing is isError.
func (t *Tools) mcpCall(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if charged, ok := ctx.Value(chargedKey{}).(*atomic.Bool); ok {
			charged.Store(true)
		}
		var ans Answer
		pc, bad := t.mcpCallOf(req)
		done, refused := t.admit(ctx, name, pc.id, req.Params.Arguments)
		switch {
		case refused != nil:
			ans = *refused
		case bad != nil:
			defer done()
			ans = *bad
		default:
			defer done()
			ans = t.mcpAnswer(ctx, req, name, pc)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ans.Text()}},
			StructuredContent: structured(ans), IsError: ans.Failed()}, nil
	}
}

// mcpAnswer reads the call's arguments and runs it in its conversation.
func (t *Tools) mcpAnswer(ctx context.Context, req *mcp.CallToolRequest, name string, pc platformCall) Answer {
	args, bad := readToolArgs(req.Params.Arguments)
	if bad != nil {
		return *bad
	}
	return t.mcpConversation(ctx, req, name, pc, args)
}

// mcpConversation runs the call in its conversation: the platform's call
// id (X-Call-Id, or _meta's call_id) where it sends one; else one the
// service mints on the first call and answers (conversation_id), which
// later calls send back.
// An id the service never gave out is refused: two callers whose models
// say the same id must never share a conversation, its keys or bookings.
func (t *Tools) mcpConversation(ctx context.Context, req *mcp.CallToolRequest, name string, pc platformCall, args toolArgs) Answer {
	var caller string
	if req.Extra != nil {
		caller = req.Extra.Header.Get(callerHeader)
	}
	callID, given := pc.id, strings.TrimSpace(args.ConversationID)
	args.callerNumber = pc.caller
	id, minted := callID, false
	switch {
	case callID != "":
	case given == "":
		id, minted = mintConversation(), true
	case !mintedShape.MatchString(given):
		return notDone(booking.CodeInvalidConversationID, notMinted)
	default:
		id = given
	}
	conv, e := edge.ConversationOf(caller, id)
	if e != nil {
		return notDone(booking.Code(e.Code), e.Message)
	}
	if minted {
		// A new conversation is a workflow, and room for hand-offs and
		// webhook deliveries: it costs a unit of its own, so a write
		// repeated without conversation_id (free as a repeat) is not.
		if e := edge.Charge(ctx, []byte("mint\n"+id), false); e != nil {
			return notDone(booking.Code(e.Code), e.Message)
		}
		if err := t.saga.StartConversation(ctx, conv); err != nil {
			return temporaryProblem
		}
		ans := t.callWith(ctx, conv, name, args)
		ans.ConversationID = id
		return ans.note("For the tools: this call's conversation_id is " + id + "; send it with every later tool call.")
	}
	if callID == "" {
		known, err := t.saga.KnownConversation(ctx, conv)
		if err != nil {
			return temporaryProblem
		}
		if !known {
			return notDone(booking.CodeInvalidConversationID, notMinted)
		}
	}
	return t.callWith(ctx, conv, name, args)
}

// notMinted answers a conversation_id the service did not give this key.
const notMinted = "this conversation_id was not given by bookingsaga to this key: leave it out on the first call, then send back the one its answer gives"

// mintedShape is the form of the conversation ids the service mints.
var mintedShape = regexp.MustCompile(`^cv-[0-9a-f]{32}$`)

// mintConversation is a new conversation id, unguessable.
func mintConversation() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "cv-" + hex.EncodeToString(b)
}

// ToolResult is an MCP call's structuredContent: the [status] tag and
// the line, and what they speak of.
type ToolResult struct {
	Status     string `json:"status"`
	Code       string `json:"code,omitempty"`
	Line       string `json:"line"`
	RequestKey string `json:"request_key,omitempty"`
	// ConversationID is the id the service minted for this call, on its
	// first tool call without one: later calls send it back.
	ConversationID string                   `json:"conversation_id,omitempty"`
	Receipt        *receipt.Receipt         `json:"receipt,omitempty"`
	Availability   *edge.AvailabilityAnswer `json:"availability,omitempty"`
}

// structured is an answer's structuredContent, built from its fields.
func structured(a Answer) ToolResult {
	out := ToolResult{Status: a.Status, Code: a.Code, Line: a.Line, RequestKey: a.RequestKey, Availability: a.Availability,
		ConversationID: a.ConversationID}
	if a.Receipt != nil {
		r := receipt.OnWire(*a.Receipt)
		out.Receipt = &r
		if out.RequestKey == "" {
			out.RequestKey = r.RequestKey
		}
	}
	return out
}

// mcpTool is a tool definition as MCP lists it.
func (d toolDef) mcpTool() *mcp.Tool {
	f := false
	a := &mcp.ToolAnnotations{Title: d.title, OpenWorldHint: &f}
	switch d.effect {
	case readOnly:
		a.ReadOnlyHint = true
	case additive:
		a.IdempotentHint, a.DestructiveHint = true, &f
	case destructive:
		t := true
		a.IdempotentHint, a.DestructiveHint = true, &t
	}
	return &mcp.Tool{Name: d.name, Description: d.desc, InputSchema: d.schema(), OutputSchema: toolResultSchema, Annotations: a}
}

// toolResultSchema describes ToolResult. The receipt and the
// availability are described by the API's own OpenAPI schemas, so an MCP
// client reads the same shapes as GET /v1/bookings/{key} and GET
// /v1/availability.
var toolResultSchema = map[string]any{"type": "object", "required": []string{"status", "line"}, "properties": map[string]any{
	"status": map[string]any{"type": "string", "description": "the [status] tag the reply is worded from: confirmed alone means booked"},
	"code":   map[string]any{"type": "string", "description": "a refusal's or conflict's code, or what a not_done call lacked"},
	"line":   map[string]any{"type": "string", "description": "what to say, in the language asked for"},
	"request_key": map[string]any{"type": "string",
		"description": "the key a choice or booking is known by: pass it to book, booking_status, cancel_booking and reschedule_booking"},
	"conversation_id": map[string]any{"type": "string",
		"description": "the conversation id bookingsaga gave this call, on its first tool call sent without one: send it as conversation_id with every later call"},
	"receipt":      openAPISchema("Receipt", "the receipt, as GET /v1/bookings/{request_key} answers it"),
	"availability": openAPISchema("Availability", "free starts, as GET /v1/availability answers them"),
}}

// openAPISchema is the named component schema of the embedded OpenAPI
// document (tests hold it to the served routes) with description. It
// panics on a document that lacks it: the document is compiled in.
func openAPISchema(name, description string) map[string]any {
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(edge.OpenAPI(), &doc); err != nil {
		panic(fmt.Sprintf("openapi.json: %v", err))
	}
	schema, ok := doc.Components.Schemas[name]
	if !ok {
		panic("openapi.json has no schema " + name)
	}
	schema["description"] = description
	return schema
}
