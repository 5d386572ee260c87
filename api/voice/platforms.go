package voice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// The voice platforms' endpoints: each reads its platform's documented
// payload, checks its signature, runs the tools, and answers in the
// platform's shape.

// retell serves a Retell custom function as Retell documents it
// (docs.retellai.com/build/single-multi-prompt/custom-function): the body
// {name, call: {call_id, ...}, args} in, {"result": text} out. With
// "Payload: args only" the body is the arguments alone: the function's URL
// then names the tool (/v1/tools/retell/{tool}) and a custom header the
// integrator sets, X-Call-Id: {{call_id}}, names the call.
func (t *Tools) retell(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return unread(r, body, edge.BadRequest(booking.CodeBodyTooLarge, "the body is over the API's limit"))
	}
	var call struct {
		Name string          `json:"name"`
		Call retellCall      `json:"call"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(body, &call); err != nil {
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "the body is not a Retell function call: %s", edge.JSONProblem(err)))
	}
	tool, conv, args := r.PathValue("tool"), call.Call.CallID, call.Args
	var caller string
	switch {
	case tool != "":
		// At a tool's URL the body may be the model's arguments alone,
		// which Retell signs as they are: a call object in them is the
		// model's, never caller ID.
		caller = t.headerCallerID("retell", r.Header)
	case t.signed(r, secretRetell):
		caller = call.Call.caller() // in the full body Retell signed
	}
	switch {
	case conv != "" && tool != "" && call.Name != "" && call.Name != tool:
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "the body calls %q at the URL of %q", call.Name, tool))
	case conv != "" && tool == "":
		tool = call.Name
	case conv == "" && tool != "": // args only
		conv, args = r.Header.Get("X-Call-Id"), body
		if conv == "" {
			return unread(r, body, edge.BadRequest(booking.CodeMissingField, "an args-only call needs the header X-Call-Id: {{call_id}} in the function's settings"))
		}
	}
	if tool == "" || conv == "" {
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "want {name, call: {call_id}, args}, or the arguments alone at /v1/tools/retell/{tool} with X-Call-Id"))
	}
	return edge.WriteJSON(w, http.StatusOK, map[string]string{"result": t.call(r.Context(), callOf(conv, caller), tool, args).Text()})
}

// retellCall is the part of Retell's call object the service reads
// (PhoneCallResponse in Retell's SDK): a web call has no numbers.
type retellCall struct {
	CallID     string `json:"call_id"`
	Direction  string `json:"direction"`
	FromNumber string `json:"from_number"`
	ToNumber   string `json:"to_number"`
}

// caller is the caller's number: from_number on an inbound call, and on
// an outbound one to_number (from_number is then the agency's own).
func (c retellCall) caller() string {
	if c.Direction == "outbound" {
		return c.ToNumber
	}
	return c.FromNumber
}

// retellVerified checks Retell's signature, when a key is set. In "args
// only" mode it signs the arguments alone, so a captured call could be
// sent again within its five minutes to another tool or under another
// call id: each signature is bound to the path and X-Call-Id it first came
// with. The platform resending a call as it was still gets in.
// At an agency's tool URL the agency's key must be set.
func (t *Tools) retellVerified(r *http.Request, body []byte) *edge.Error {
	key, e := t.secret(r, secretRetell)
	switch {
	case e != nil:
		return e
	case key == "" && agencyURL(r):
		return unauthorized("this agency has set no Retell API key (PUT /v1/voice/secrets/retell)")
	case key == "":
		return nil
	}
	sig, ok := retellSigned(body, r.Header.Get("X-Retell-Signature"), key, t.set.Now())
	if !ok {
		return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: "bad or missing X-Retell-Signature"}
	}
	if !t.replays.bind(sig, r.URL.Path+"\n"+r.Header.Get("X-Call-Id"), t.set.Now()) {
		return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized),
			Message: "this X-Retell-Signature was already used for another tool or call"}
	}
	return nil
}

// vapiCaller is the caller ID of a message Vapi's credential vouched for
// (message.call.customer.number); without one, anyone could write it.
func (t *Tools) vapiCaller(r *http.Request, msg vapiMessage) string {
	if !t.signed(r, secretVapi, secretVapiHMAC) {
		return ""
	}
	return msg.caller()
}

// vapiVerified checks Vapi's shared secret and HMAC credential, each when
// set; at an agency's tool URL one of them must be.
func (t *Tools) vapiVerified(r *http.Request, body []byte) *edge.Error {
	secret, e := t.secret(r, secretVapi)
	if e != nil {
		return e
	}
	hmacSecret, e := t.secret(r, secretVapiHMAC)
	if e != nil {
		return e
	}
	if secret == "" && hmacSecret == "" && agencyURL(r) {
		return unauthorized("this agency has set no Vapi secret (PUT /v1/voice/secrets/vapi or vapi_hmac)")
	}
	// A Vapi bearer credential sends "Bearer <token>" unless its
	// bearerPrefixEnabled is false (BearerAuthenticationPlan): either is
	// the secret.
	got := r.Header.Get("X-Vapi-Secret")
	if token, ok := strings.CutPrefix(got, "Bearer "); ok {
		got = token
	}
	if secret != "" && !constantEqual(got, secret) {
		return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: "bad or missing X-Vapi-Secret"}
	}
	if hmacSecret != "" && !vapiSigned(body, r.Header.Get("X-Signature"), r.Header.Get("X-Timestamp"),
		r.Header.Get(vapiMessageIDHeader), hmacSecret, t.set.Now()) {
		return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized),
			Message: "bad or missing x-signature, or x-timestamp outside five minutes (with x-message-id, sign \"{svix-id}.{timestamp}.{body}\")"}
	}
	return nil
}

// retellSigned checks "v=<unix ms>,d=<hex HMAC-SHA256(body + timestamp)>"
// in constant time, and refuses signatures older than five minutes. It
// returns the signature in one spelling (its parts in order, its hex in
// lower case): a replay binds to that, however the header spells it.
func retellSigned(body []byte, header, key string, now time.Time) (string, bool) {
	var ts, digest string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "v":
			ts = v
		case "d":
			digest = v
		}
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.UnixMilli(ms)).Abs() > signatureLife {
		return "", false
	}
	got, err := hex.DecodeString(digest)
	if err != nil {
		return "", false
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	mac.Write([]byte(ts))
	if !hmac.Equal(got, mac.Sum(nil)) {
		return "", false
	}
	return strconv.FormatInt(ms, 10) + ":" + hex.EncodeToString(got), true
}

// vapiSigned checks a Vapi HMAC credential's signature with its defaults
// (docs.vapi.ai/server-url/server-authentication; HMACAuthenticationPlan in
// Vapi's OpenAPI): x-signature is the hex HMAC-SHA256 of
// "{timestamp}.{body}", a "sha256=" prefix tolerated, and x-timestamp,
// which Vapi documents for replay protection without a unit, is read as
// milliseconds when it has 13 digits or more and seconds otherwise. With
// the message id header set (messageIdHeader), the credential's
// payloadFormat is "{svix-id}.{timestamp}.{body}": the id is signed too.
func vapiSigned(body []byte, signature, ts, msgID, secret string, now time.Time) bool {
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	at := time.Unix(n, 0)
	if len(ts) >= 13 {
		at = time.UnixMilli(n)
	}
	if now.Sub(at).Abs() > signatureLife {
		return false
	}
	got, err := hex.DecodeString(strings.TrimPrefix(signature, "sha256="))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	if msgID != "" {
		mac.Write([]byte(msgID + "."))
	}
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// vapiMessageIDHeader carries a Vapi message's unique id, where the
// credential names it (docs/agent-api.md#connect-vapi): a resend of the
// message carries the same id, which the tools answer as the first time.
const vapiMessageIDHeader = "X-Message-Id"

// vapi serves Vapi's tool-calls server message (docs.vapi.ai/tools/custom-tools
// and ServerMessageToolCalls in Vapi's OpenAPI): each call of
// message.toolCallList (or, failing that, of toolWithToolCallList) runs in
// the conversation of message.call.id, and the answer is HTTP 200 with
// {"results":[{name, toolCallId, result or error}]}, in the calls' order,
// each one line. A body that is not a tool-calls message gets 400.
func (t *Tools) vapi(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return unread(r, body, edge.BadRequest(booking.CodeBodyTooLarge, "the body is over the API's limit"))
	}
	var msg vapiMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "the body is not a Vapi server message: %s", edge.JSONProblem(err)))
	}
	if t := msg.Message.Type; t != "tool-calls" {
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "only Vapi tool-calls messages are served here, got message.type %q", t))
	}
	calls := msg.calls()
	if len(calls) == 0 {
		return unread(r, body, edge.BadRequest(booking.CodeBadJSON, "the tool-calls message has no message.toolCallList"))
	}
	out := vapiResults{Results: make([]vapiResult, 0, len(calls))}
	for _, tc := range calls {
		ans := notDone(booking.CodeMissingField, "the message names no call (message.call.id)")
		if msg.Message.Call.ID != "" {
			ans = t.call(r.Context(), callOf(msg.Message.Call.ID, t.vapiCaller(r, msg)), tc.name(), tc.args())
		}
		res := vapiResult{Name: tc.name(), ToolCallID: tc.ID}
		// A call that did nothing is Vapi's error (its request-failed
		// path); conflicts, refusals, pending outcomes and a question for
		// the caller (a DST gap) are results, which the model words from
		// their [status].
		if ans.Failed() {
			res.Error = oneLine(ans.Text())
		} else {
			res.Result = oneLine(ans.Text())
		}
		out.Results = append(out.Results, res)
	}
	return edge.WriteJSON(w, http.StatusOK, out)
}

// vapiMessage is the part of a tool-calls message the service reads.
type vapiMessage struct {
	Message struct {
		Type string `json:"type"`
		Call struct {
			ID       string       `json:"id"`
			Customer vapiCustomer `json:"customer"`
		} `json:"call"`
		// Customer is the message's own copy of the call's customer.
		Customer             vapiCustomer   `json:"customer"`
		ToolCallList         []vapiToolCall `json:"toolCallList"`
		ToolWithToolCallList []struct {
			ToolCall vapiToolCall `json:"toolCall"`
		} `json:"toolWithToolCallList"`
		// ToolCalls is the older name, which Vapi's schema no longer
		// lists but some of its examples still read.
		ToolCalls []vapiToolCall `json:"toolCalls"`
	} `json:"message"`
}

// vapiCustomer is Vapi's CreateCustomerDto: number is the customer's,
// in E.164 unless the assistant turned that check off; a web call has
// none.
type vapiCustomer struct {
	Number string `json:"number"`
}

// caller is the customer's number, the call's copy first.
func (m vapiMessage) caller() string {
	if n := m.Message.Call.Customer.Number; n != "" {
		return n
	}
	return m.Message.Customer.Number
}

func (m vapiMessage) calls() []vapiToolCall {
	msg := m.Message
	if len(msg.ToolCallList) > 0 {
		return msg.ToolCallList
	}
	var out []vapiToolCall
	for _, t := range msg.ToolWithToolCallList {
		if t.ToolCall.ID != "" {
			out = append(out, t.ToolCall)
		}
	}
	if len(out) > 0 {
		return out
	}
	return msg.ToolCalls
}

// vapiToolCall is a ToolCall: {id, type, function: {name, arguments}},
// arguments an object or a JSON string. The guide's examples also put
// name and arguments (or parameters) on the call itself.
type vapiToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

func (tc vapiToolCall) name() string {
	if tc.Function.Name != "" {
		return tc.Function.Name
	}
	return tc.Name
}

func (tc vapiToolCall) args() json.RawMessage {
	for _, a := range []json.RawMessage{tc.Function.Arguments, tc.Arguments, tc.Function.Parameters, tc.Parameters} {
		if len(a) > 0 {
			return a
		}
	}
	return nil
}

// vapiResults is Vapi's ServerMessageResponseToolCalls.
type vapiResults struct {
	Results []vapiResult `json:"results"`
}

// vapiResult is Vapi's ToolCallResult: result when the call did
// something (a confirmation, a conflict, a refusal, a pending outcome),
// error when it did nothing; HTTP 200 either way, as Vapi requires.
type vapiResult struct {
	Name       string `json:"name"`
	ToolCallID string `json:"toolCallId"`
	Result     string `json:"result,omitempty"`
	Error      string `json:"error,omitempty"`
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func constantEqual(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }

// signatureLife is how far a platform's signature timestamp may be from now.
const signatureLife = 5 * time.Minute

// replays binds each signature seen within its life to the request it
// first signed.
type replays struct {
	mu     sync.Mutex
	seen   map[string]replay
	pruned time.Time
}

type replay struct {
	target string
	at     time.Time
}

// bind reports whether sig may sign target: the first time, or again for
// the same target. Signatures past their life go, so the map holds the
// calls of a few minutes, which the rate limit bounds.
func (c *replays) bind(sig, target string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]replay{}
	}
	if now.Sub(c.pruned) > signatureLife {
		for k, v := range c.seen {
			if now.Sub(v.at) > 2*signatureLife {
				delete(c.seen, k)
			}
		}
		c.pruned = now
	}
	if prev, ok := c.seen[sig]; ok {
		return prev.target == target
	}
	c.seen[sig] = replay{target: target, at: now}
	return true
}
