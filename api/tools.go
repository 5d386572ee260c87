package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// toolArgs are the arguments every tool may take; each tool reads its own.
type toolArgs struct {
	Slot
	RequestKey string `json:"request_key,omitempty"`
	// Reference is what the caller quotes back (BS-XXXX-XXXX), for
	// booking_status when the key is not at hand.
	Reference             string   `json:"reference,omitempty"`
	ExpectedPolicyVersion string   `json:"expected_policy_version,omitempty"`
	Contact               *Contact `json:"contact,omitempty"`
	// Hold, with select_slot, holds the slot until book (or the hold's
	// expiry); it needs expected_policy_version.
	Hold bool `json:"hold,omitempty"`
	// From and To bound check_availability; Date (YYYY-MM-DD, local) is
	// the simpler alternative a model tends to produce.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Date string `json:"date,omitempty"`
}

// tool runs one tool call for a conversation and returns its one-line result.
func (s *Server) tool(ctx context.Context, conversationID, name string, raw json.RawMessage) string {
	var args toolArgs
	// Some platforms send arguments as a JSON string.
	var str string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &str) == nil {
		raw = json.RawMessage(str)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "NOT done: could not read the arguments: " + err.Error()
		}
	}
	text, err := s.runTool(ctx, conversationID, name, args)
	if err != nil {
		return toolError(err)
	}
	return text
}

func (s *Server) runTool(ctx context.Context, conv, name string, a toolArgs) (string, error) {
	switch name {
	case "check_availability":
		return s.toolAvailability(ctx, a)
	case "select_slot":
		in, e := a.Slot.Intent(s.cfg.Now())
		if e != nil {
			return "", e
		}
		ch, err := s.client.Choose(ctx, conv, in, false)
		if err != nil {
			return "", err
		}
		if text, held, err := s.held(ctx, conv, ch.Outstanding); err != nil || held {
			return text, err
		}
		if a.Hold {
			return s.toolHold(ctx, ch.RequestKey, a)
		}
		return fmt.Sprintf("Noted the caller's choice. request_key %s.", ch.RequestKey), nil
	case "book":
		return s.toolBook(ctx, conv, a)
	case "booking_status", "cancel_booking":
		if name == "booking_status" && a.RequestKey == "" && a.Reference != "" {
			r, err := s.client.ByReference(ctx, a.Reference)
			return Say(r), err
		}
		if err := s.ours(ctx, conv, a.RequestKey); err != nil {
			return "", err
		}
		if name == "booking_status" {
			r, err := s.client.Status(ctx, a.RequestKey)
			return Say(r), err
		}
		r, err := s.client.Cancel(ctx, a.RequestKey)
		if err == nil && r.Status == receipt.StatusCancelled {
			// Choosing the same slot again later is a new booking.
			s.tell(ctx, conv, a.RequestKey, s.client.Retire)
		}
		return Say(r), err
	case "reschedule_booking":
		return s.toolReschedule(ctx, conv, a)
	}
	return "", badRequest(booking.CodeMissingField, "unknown tool %q", name)
}

// toolBook resolves the key through the intent rule, so a tool call the
// model re-issues (with a new tool-call id) lands on the same booking.
func (s *Server) toolBook(ctx context.Context, conv string, a toolArgs) (string, error) {
	if a.ExpectedPolicyVersion == "" {
		return "", badRequest(booking.CodeMissingField, "expected_policy_version is required: use the one check_availability gave")
	}
	req, e := commitRequest(a.Slot, a.ExpectedPolicyVersion, a.Contact, s.cfg.Now())
	if e != nil {
		return "", e
	}
	ch, err := s.client.Choose(ctx, conv, req.Intent, true)
	if err != nil {
		return "", err
	}
	if text, held, err := s.held(ctx, conv, ch.Outstanding); err != nil || held {
		return text, err
	}
	r, err := s.client.Commit(ctx, ch.RequestKey, req)
	switch {
	case err != nil || r.Status == receipt.StatusPending:
	case final(r):
		// The key's booking ended unkept; the same choice again (a slot
		// that freed up, a refreshed policy) must not meet this outcome.
		s.tell(ctx, conv, ch.RequestKey, s.client.Retire)
	default:
		s.tell(ctx, conv, ch.RequestKey, s.client.Settle)
	}
	return Say(r), err
}

// tell updates the conversation's bookkeeping about a key once its booking
// call is answered. A failure is logged, never spoken: the caller hears
// what happened to the booking, and the conversation's next choice
// re-reads an unsettled key anyway.
func (s *Server) tell(ctx context.Context, conv, key string, update func(context.Context, string, string) error) {
	if err := update(ctx, conv, key); err != nil {
		s.cfg.Log.Warn("conversation not told how its booking came out", zap.String("request_key", key), zap.Error(err))
	}
}

// toolHold holds the chosen slot until book confirms it.
func (s *Server) toolHold(ctx context.Context, key string, a toolArgs) (string, error) {
	req, e := commitRequest(a.Slot, a.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return "", e
	}
	r, err := s.client.Hold(ctx, key, req)
	return Say(r) + " request_key " + key + ".", err
}

// held answers a call that would start another booking while one of this
// conversation's is still pending: the article's rule is that a pending
// outcome holds the conversation until it is settled.
func (s *Server) held(ctx context.Context, conv string, outstanding []string) (string, bool, error) {
	if len(outstanding) == 0 {
		return "", false, nil
	}
	r, err := s.client.Pending(ctx, conv, outstanding)
	if err != nil || r == nil {
		return "", false, err
	}
	return Say(*r) + " An earlier booking in this call is not settled: check it with booking_status (request_key " +
		r.RequestKey + ") before booking anything else.", true, nil
}

// final reports a receipt whose key can never book: a conflict, or a
// refusal that retrying cannot change.
func final(r receipt.Receipt) bool {
	return r.Status == receipt.StatusConflict || r.Status == receipt.StatusRejected && (r.Reason == nil || !r.Reason.Retryable)
}

func (s *Server) toolReschedule(ctx context.Context, conv string, a toolArgs) (string, error) {
	req, e := commitRequest(a.Slot, a.ExpectedPolicyVersion, nil, s.cfg.Now())
	if e != nil {
		return "", e
	}
	if err := s.ours(ctx, conv, a.RequestKey); err != nil {
		return "", err
	}
	newKey, err := s.client.Select(ctx, conv, req.Intent)
	if err != nil {
		return "", err
	}
	r, err := s.client.Reschedule(ctx, a.RequestKey, newKey, req)
	if err == nil && final(r) {
		s.tell(ctx, conv, newKey, s.client.Retire)
	}
	return Say(r), err
}

// ours refuses a key this conversation did not make: a voice tool acts
// only on its own call's bookings, whatever key a model or a caller says.
func (s *Server) ours(ctx context.Context, conv, key string) error {
	if err := booking.ValidateKey(key); err != nil {
		return fromRejection(err)
	}
	made, err := s.client.Made(ctx, conv, key)
	if err != nil {
		return err
	}
	if !made {
		return badRequest(codeNotThisConversation, "request_key %s was not made in this conversation; a caller's earlier booking is found by its reference", key)
	}
	return nil
}

func (s *Server) toolAvailability(ctx context.Context, a toolArgs) (string, error) {
	q := booking.AvailabilityQuery{PropertyID: a.PropertyID, AgentID: a.AgentID, ExtraResources: a.ExtraResources,
		Duration: time.Duration(a.DurationMinutes) * time.Minute}
	var err error
	switch {
	case a.Date != "":
		q.From, q.To, err = localDay(a.Date, a.TimeZone)
	default:
		q.From, err = time.Parse(time.RFC3339, a.From)
		if err == nil {
			q.To, err = time.Parse(time.RFC3339, a.To)
		}
	}
	if err != nil {
		return "", badRequest(codeInvalidTime, "give date (YYYY-MM-DD with time_zone) or from and to (RFC 3339)")
	}
	av, err := s.client.Availability(ctx, q)
	if err != nil {
		return "", err
	}
	if len(av.Slots) == 0 {
		return fmt.Sprintf("No free time then (policy %s). Offer another day.", av.PolicyVersion), nil
	}
	var times []string
	for i, sl := range av.Slots {
		if i == 8 {
			times = append(times, fmt.Sprintf("and %d more", len(av.Slots)-8))
			break
		}
		times = append(times, sl.LocalStart)
	}
	return fmt.Sprintf("Free: %s. Pass expected_policy_version %s when booking.", strings.Join(times, "; "), av.PolicyVersion), nil
}

func localDay(date, zone string) (time.Time, time.Time, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" {
		return time.Time{}, time.Time{}, fmt.Errorf("time zone %q", zone)
	}
	d, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return d, d.AddDate(0, 0, 1), nil
}

// toolError words a failure for the model, never as a success.
func toolError(err error) string {
	var e *Error
	var rej *booking.Rejection
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &e):
		return "NOT done: " + e.Message + "."
	case errors.As(err, &rej):
		return "NOT done: " + rej.Message + "."
	case errors.As(err, &nf) || errors.Is(err, sagaclient.ErrNotFound):
		return "NOT done: there is no booking under this request_key."
	}
	return "NOT done: a temporary problem. Try the same call again in a moment."
}

// retell serves a Retell custom function as Retell documents it
// (docs.retellai.com/build/single-multi-prompt/custom-function): the body
// {name, call: {call_id, ...}, args} in, {"result": text} out. With
// "Payload: args only" the body is the arguments alone: the function's URL
// then names the tool (/v1/tools/retell/{tool}) and a custom header the
// integrator sets, X-Call-Id: {{call_id}}, names the call.
func (s *Server) retell(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return badRequest(codeBodyTooLarge, "body is over %d bytes", s.cfg.MaxBody)
	}
	if s.cfg.RetellKey != "" && !retellSigned(body, r.Header.Get("X-Retell-Signature"), s.cfg.RetellKey, s.cfg.Now()) {
		return &Error{Status: http.StatusUnauthorized, Code: string(codeUnauthorized), Message: "bad or missing X-Retell-Signature"}
	}
	var call struct {
		Name string `json:"name"`
		Call struct {
			CallID string `json:"call_id"`
		} `json:"call"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(body, &call); err != nil {
		return badRequest(codeBadJSON, "the body is not a Retell function call: %s", jsonProblem(err))
	}
	tool, conv, args := r.PathValue("tool"), call.Call.CallID, call.Args
	switch {
	case conv != "" && tool != "" && call.Name != "" && call.Name != tool:
		return badRequest(codeBadJSON, "the body calls %q at the URL of %q", call.Name, tool)
	case conv != "" && tool == "":
		tool = call.Name
	case conv == "" && tool != "": // args only
		conv, args = r.Header.Get("X-Call-Id"), body
		if conv == "" {
			return badRequest(booking.CodeMissingField, "an args-only call needs the header X-Call-Id: {{call_id}} in the function's settings")
		}
	}
	if tool == "" || conv == "" {
		return badRequest(codeBadJSON, "want {name, call: {call_id}, args}, or the arguments alone at /v1/tools/retell/{tool} with X-Call-Id")
	}
	return writeJSON(w, http.StatusOK, map[string]string{"result": s.tool(r.Context(), conv, tool, args)})
}

// retellSigned checks "v=<unix ms>,d=<hex HMAC-SHA256(body + timestamp)>"
// in constant time, and refuses signatures older than five minutes.
func retellSigned(body []byte, header, key string, now time.Time) bool {
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
	if err != nil || now.Sub(time.UnixMilli(ms)).Abs() > 5*time.Minute {
		return false
	}
	got, err := hex.DecodeString(digest)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	mac.Write([]byte(ts))
	return hmac.Equal(got, mac.Sum(nil))
}

// vapiSigned checks a Vapi HMAC credential's signature with its defaults
// (docs.vapi.ai/server-url/server-authentication; HMACAuthenticationPlan in
// Vapi's OpenAPI): x-signature is the hex HMAC-SHA256 of
// "{timestamp}.{body}", a "sha256=" prefix tolerated, and x-timestamp,
// which Vapi documents for replay protection without a unit, is read as
// milliseconds when it has 13 digits or more and seconds otherwise.
func vapiSigned(body []byte, signature, ts, secret string, now time.Time) bool {
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	at := time.Unix(n, 0)
	if len(ts) >= 13 {
		at = time.UnixMilli(n)
	}
	if now.Sub(at).Abs() > 5*time.Minute {
		return false
	}
	got, err := hex.DecodeString(strings.TrimPrefix(signature, "sha256="))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// vapi serves Vapi's tool-calls server message (docs.vapi.ai/tools/custom-tools
// and ServerMessageToolCalls in Vapi's OpenAPI): each call of
// message.toolCallList (or, failing that, of toolWithToolCallList) runs in
// the conversation of message.call.id, and the answer is HTTP 200 with
// {"results":[{name, toolCallId, result}]}, in the calls' order, each
// result one line. A body that is not a tool-calls message gets 400.
func (s *Server) vapi(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.VapiSecret != "" && !constantEqual(r.Header.Get("X-Vapi-Secret"), s.cfg.VapiSecret) {
		return &Error{Status: http.StatusUnauthorized, Code: string(codeUnauthorized), Message: "bad or missing X-Vapi-Secret"}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return badRequest(codeBodyTooLarge, "body is over %d bytes", s.cfg.MaxBody)
	}
	if s.cfg.VapiHMACSecret != "" && !vapiSigned(body, r.Header.Get("X-Signature"), r.Header.Get("X-Timestamp"), s.cfg.VapiHMACSecret, s.cfg.Now()) {
		return &Error{Status: http.StatusUnauthorized, Code: string(codeUnauthorized),
			Message: "bad or missing x-signature, or x-timestamp outside five minutes"}
	}
	var msg vapiMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return badRequest(codeBadJSON, "the body is not a Vapi server message: %s", jsonProblem(err))
	}
	if t := msg.Message.Type; t != "tool-calls" {
		return badRequest(codeBadJSON, "only Vapi tool-calls messages are served here, got message.type %q", t)
	}
	calls := msg.calls()
	if len(calls) == 0 {
		return badRequest(codeBadJSON, "the tool-calls message has no message.toolCallList")
	}
	out := vapiResults{Results: make([]vapiResult, 0, len(calls))}
	for _, tc := range calls {
		text := "NOT done: the message names no call (message.call.id)."
		if msg.Message.Call.ID != "" {
			text = s.tool(r.Context(), msg.Message.Call.ID, tc.name(), tc.args())
		}
		out.Results = append(out.Results, vapiResult{Name: tc.name(), ToolCallID: tc.ID, Result: oneLine(text)})
	}
	return writeJSON(w, http.StatusOK, out)
}

// vapiMessage is the part of a tool-calls message the service reads.
type vapiMessage struct {
	Message struct {
		Type string `json:"type"`
		Call struct {
			ID string `json:"id"`
		} `json:"call"`
		ToolCallList         []vapiToolCall `json:"toolCallList"`
		ToolWithToolCallList []struct {
			ToolCall vapiToolCall `json:"toolCall"`
		} `json:"toolWithToolCallList"`
		// ToolCalls is the older name, which Vapi's schema no longer
		// lists but some of its examples still read.
		ToolCalls []vapiToolCall `json:"toolCalls"`
	} `json:"message"`
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

type vapiResult struct {
	Name       string `json:"name"`
	ToolCallID string `json:"toolCallId"`
	Result     string `json:"result"`
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func constantEqual(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }
