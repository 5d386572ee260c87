package voice

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
)

// One tool call is one unit of cost, whichever platform carries it and
// however many one request carries (a Vapi message may hold several).

// atCapacity is the answer to a call not run because too many are: at
// once, with a line the agent can say while it waits to send it again.
const atCapacity = "bookingsaga is at capacity this second, so nothing was sent and nothing changed. " +
	"Say \"One moment, I'll try that again\", then send the same call again in a second or two"

// admit charges one tool call to the key its request came in under and
// takes a place among the tool calls running in this process; done gives
// the place back. A call refused either way did nothing: it is answered
// not done, and the same call again later is safe.
//
// Every tool asks something of the store, Temporal or a calendar, so
// every one passes the gate, reads included. A booking call repeated
// within the limit's window is free (it lands on the same saga); a read
// repeated is charged, as it is asked again.
func (t *Tools) admit(ctx context.Context, name, callID string, raw json.RawMessage) (done func(), refused *Answer) {
	call := append([]byte(name+"\n"+callID+"\n"), raw...)
	if e := api.Charge(ctx, call, writes(name)); e != nil {
		a := notDone(booking.Code(e.Code), e.Message)
		return nil, &a
	}
	if !t.cfg.Admission.Enter() {
		t.shed()
		a := notDone(booking.CodeUnavailable, atCapacity)
		return nil, &a
	}
	start := time.Now()
	return func() { t.cfg.Admission.Done(time.Since(start)) }, nil
}

// writes reports whether the tool name makes or changes something, so
// that its repeat is idempotent by its key; an unknown name reads.
func writes(name string) bool {
	for _, d := range toolDefs {
		if d.name == name {
			return d.effect != readOnly
		}
	}
	return false
}

// mcpMessage is what the edge reads of an MCP request before the SDK
// does: which tool a tools/call runs, with what, under which JSON-RPC id.
type mcpMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// admitMCP charges an MCP request: a tools/call as the tool call it is,
// through admit; anything else (initialize, tools/list, a notification)
// as a request whose repeat is free, since none reaches the store. A
// refused tools/call is answered as its tool's result, isError, so the
// model reads "NOT done" as it would from the tool itself.
func (t *Tools) admitMCP(w http.ResponseWriter, r *http.Request, body []byte) (done func(), answered bool, err error) {
	var msg mcpMessage
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		if e := api.Charge(r.Context(), body, true); e != nil {
			return nil, false, e
		}
		return func() {}, false, nil
	}
	done, refused := t.admit(r.Context(), msg.Params.Name, r.Header.Get("X-Call-Id"), msg.Params.Arguments)
	if refused == nil {
		return done, false, nil
	}
	result := map[string]any{"content": []map[string]string{{"type": "text", "text": refused.Text()}},
		"structuredContent": structured(*refused), "isError": true}
	return nil, true, api.WriteJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
}

// unread answers e to a request that carries no call the tools could
// read (a bad body), charged once as a read, so that a flood of them is
// limited too.
func unread(r *http.Request, body []byte, e *api.Error) error {
	if c := api.Charge(r.Context(), append([]byte(r.URL.Path+"\n"), body...), false); c != nil {
		return c
	}
	return e
}
