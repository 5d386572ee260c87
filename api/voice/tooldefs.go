package voice

import (
	"context"
	"net/http"
	"strings"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// The voice tools, defined once: the handlers dispatch on these, the
// exported Retell functions and Vapi tools are made from them, and the
// OpenAPI document's ToolArgs schemas must equal theirs (a test holds it
// to that).

// param is one argument of a tool, as a JSON Schema property.
type param struct {
	name, kind, desc string
	required         bool
	props            []param // an object's fields
}

type toolDef struct {
	name, title, desc string
	// effect is what a call does to the bookings, for MCP's annotations.
	effect effect
	params []param
	run    func(t *Tools, ctx context.Context, conv string, a toolArgs) (Answer, error)
}

type effect int

const (
	readOnly    effect = iota
	additive           // adds (a choice, a hold, a booking); the same call again adds nothing more
	destructive        // lets a booking go; the same call again changes nothing more
)

// The arguments that name a slot, shared by the tools that take one.
var slotParams = []param{
	{name: "property_id", kind: "string", desc: "the property's id, as check_availability was given it", required: true},
	{name: "agent_id", kind: "string", desc: "the agent's id; or \"any\" with agent_pool"},
	{name: "time_zone", kind: "string", desc: "the property's IANA time zone, e.g. Europe/Paris", required: true},
	{name: "local_start", kind: "string", desc: "the start as the caller agreed it, local wall time YYYY-MM-DDTHH:MM in time_zone"},
	{name: "starts_at", kind: "string", desc: "or the start as an RFC 3339 instant with its offset"},
	{name: "duration_minutes", kind: "integer", desc: "the viewing's length in minutes"},
	{name: "extra_resources", kind: "array", desc: "other resources the viewing needs, e.g. a key holder's id"},
	{name: "agent_pool", kind: "string", desc: "a team: whichever of its agents is free, in place of agent_id; the result names the agent booked"},
}

var policyParam = param{name: "expected_policy_version", kind: "string",
	desc: "the policy_version check_availability answered; a booking under another version is refused"}

func with(base []param, more ...param) []param {
	return append(append([]param{}, base...), more...)
}

func required(p param) param { p.required = true; return p }

// optional is ps with nothing required: what a reschedule leaves out
// stays as booked.
func optional(ps []param) []param {
	out := make([]param, len(ps))
	for i, p := range ps {
		p.required = false
		out[i] = p
	}
	return out
}

var toolDefs = []toolDef{
	{name: "check_availability", title: "Check availability", effect: readOnly, desc: "Free start times for a property and an agent on one local day (date) or between two instants (from, to). An offer, not a booking.",
		params: []param{slotParams[0], slotParams[1], slotParams[2],
			{name: "date", kind: "string", desc: "the local day, YYYY-MM-DD"},
			{name: "from", kind: "string", desc: "or the window's start, RFC 3339"},
			{name: "to", kind: "string", desc: "and its end, RFC 3339"},
			slotParams[5], slotParams[6], slotParams[7]},
		run: (*Tools).toolAvailability},
	{name: "select_slot", title: "Select a slot", effect: additive, desc: "Record the slot the caller chose, before book. With hold, the slot is held until book or the hold's expiry.",
		params: with(slotParams, param{name: "hold", kind: "boolean", desc: "hold the slot until book (needs expected_policy_version)"}, policyParam),
		run:    (*Tools).toolSelect},
	{name: "book", title: "Book", effect: additive, desc: "Book the chosen slot. Word the reply from the status in brackets alone: only [confirmed] means booked.",
		params: with(slotParams, required(policyParam), param{name: "contact", kind: "object", desc: "the caller's name, phone and email, kept sealed for the agency and the messages the caller agreed to",
			props: []param{{name: "name", kind: "string", desc: "the caller's name"}, {name: "phone", kind: "string", desc: "the caller's phone number"},
				{name: "email", kind: "string", desc: "the caller's email, read back to them letter by letter, only if they chose email"},
				{name: "notify", kind: "string", desc: "sms or email only if the caller said yes when asked \"May we text or email you the confirmation, any change and a reminder?\" (sms: phone in E.164, e.g. +33612345678; email: the address); otherwise none"},
				{name: "keep_on_file", kind: "boolean", desc: "true only if the caller said yes when asked \"May the agency keep your name and number on file about this viewing?\"; otherwise leave out"}}}),
		run: (*Tools).toolBook},
	{name: "booking_status", title: "Booking status", effect: readOnly, desc: "What became of a booking made or found in this call, by its request_key or the reference the caller quotes (BS-XXXX-XXXX); a booking from an earlier call is found with find_booking first.",
		params: []param{{name: "request_key", kind: "string", desc: "the request_key an earlier tool answered"},
			{name: "reference", kind: "string", desc: "the reference the caller quotes, BS-XXXX-XXXX"}},
		run: (*Tools).toolStatus},
	{name: "find_booking", title: "Find a caller's booking", effect: additive,
		desc: "Find a booking the caller made in an earlier call: by the reference they quote and the phone number they gave when booking, which lets this call check, cancel or reschedule it. Without a reference, by the number this call comes from (the platform's caller ID, never a number you pass) and the name they booked under: that only tells when the booking is; to change it, call again with send_code, then with the code the caller reads from the text. A wrong detail only says nothing was found.",
		params: []param{{name: "reference", kind: "string", desc: "the reference the caller quotes, BS-XXXX-XXXX"},
			{name: "phone", kind: "string", desc: "with reference: the phone number the caller gave when booking, as they say it"},
			{name: "name", kind: "string", desc: "without reference: the name the caller booked under"},
			{name: "send_code", kind: "boolean", desc: "with name, once the booking was found by caller ID and the caller wants to change it: text a one-time code to the number it was booked with"},
			{name: "local_start", kind: "string", desc: "with send_code, when several bookings were found: the local start (YYYY-MM-DDTHH:MM) of the one the caller means"},
			{name: "code", kind: "string", desc: "the one-time code the caller reads from that text"}},
		run: (*Tools).toolFind},
	{name: "property_info", title: "Property facts", effect: readOnly,
		desc:   "Answer a caller's question about a property from the facts the agency approved, and nothing else: no approved fact means you do not have that information.",
		params: []param{slotParams[0], {name: "topic", kind: "string", desc: "the topic of the question in a word or two, e.g. parking, floor, pets", required: true}},
		run:    (*Tools).toolPropertyInfo},
	{name: "request_human", title: "Ask for a person", effect: additive,
		desc: "Pass the caller to a person, who calls them back: for questions of suitability, eligibility or advice, a fact property_info does not have, or a booking problem. Say what it answers; transfer the call too where your platform can.",
		params: []param{{name: "topic", kind: "string", desc: "the kind of question: " + strings.Join(booking.HandoffTopics, ", "), required: true},
			{name: "reason", kind: "string", desc: "the caller's reason, in their own words, and nothing else", required: true},
			{name: "callback_number", kind: "string", desc: "a number the caller asks to be called back on; leave out to use the number this call comes from"},
			{name: "callback_window", kind: "string", desc: "when the caller would like the call back, in their words, e.g. weekday mornings"}},
		run: (*Tools).toolRequestHuman},
	{name: "cancel_booking", title: "Cancel a booking", effect: destructive, desc: "Cancel a booking made in this call, or found in it with find_booking.",
		params: []param{{name: "request_key", kind: "string", desc: "the booking's request_key", required: true}},
		run:    (*Tools).toolCancel},
	{name: "reschedule_booking", title: "Reschedule a booking", effect: destructive, desc: "Move a booking made in this call (or found in it with find_booking) to a new time: the new slot is booked first, then the old one released. Give what changes, the new local_start at the least; the rest stays as booked.",
		params: with([]param{{name: "request_key", kind: "string", desc: "the booking's request_key", required: true}}, optional(with(slotParams, policyParam))...),
		run:    (*Tools).toolReschedule},
}

func (t *Tools) run(ctx context.Context, conv, name string, a toolArgs) (Answer, error) {
	for _, d := range toolDefs {
		if d.name == name {
			return d.run(t, ctx, conv, a)
		}
	}
	return Answer{}, edge.BadRequest(booking.CodeMissingField, "unknown tool %q", name)
}

// schema is a tool's arguments as a JSON Schema object.
func (d toolDef) schema() map[string]any {
	return objectSchema(append(append([]param{}, d.params...), languageParam, conversationParam))
}

// languageParam is every tool's: the language of the line it answers.
var languageParam = param{name: "language", kind: "string", desc: "the language to answer in: en (the default), fr or zh"}

// conversationParam names the call where the platform sends no call id
// of its own (an MCP client without the X-Call-Id header): the service
// mints it on the first call, and the bookings it makes are its own.
var conversationParam = param{name: "conversation_id", kind: "string",
	desc: "only where the platform sends no call id itself: leave it out on the first tool call of a call, then send the conversation_id that answer gave on every later one"}

func objectSchema(ps []param) map[string]any {
	props := map[string]any{}
	var req []string
	for _, p := range ps {
		prop := map[string]any{"type": p.kind, "description": p.desc}
		switch p.kind {
		case "array":
			prop["items"] = map[string]any{"type": "string"}
		case "object":
			prop = objectSchema(p.props)
			prop["description"] = p.desc
		}
		props[p.name] = prop
		if p.required {
			req = append(req, p.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

// baseURL is where the platform should call this API: ?base_url= when
// given, else the address this request came in on.
func baseURL(r *http.Request) string {
	if b := r.URL.Query().Get("base_url"); b != "" {
		return strings.TrimSuffix(b, "/")
	}
	scheme := "https"
	if r.TLS == nil && r.Header.Get("X-Forwarded-Proto") != "https" {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

// toolsPath is where the platforms call the tools of the agency r acts
// for: the deployment's URLs for the default agency, another agency's
// own, which its own secrets sign (secrets.go).
func toolsPath(r *http.Request) string {
	if a := agency.From(r.Context()); !a.IsDefault() {
		return "/v1/agencies/" + a.ID + "/tools"
	}
	return "/v1/tools"
}

// retellFunctions answers the tools as Retell custom functions (the LLM's
// general_tools entries of type "custom"), ready to paste.
func (t *Tools) retellFunctions(w http.ResponseWriter, r *http.Request) error {
	url := baseURL(r) + toolsPath(r) + "/retell"
	fns := make([]map[string]any, 0, len(toolDefs))
	for _, d := range toolDefs {
		fns = append(fns, map[string]any{"type": "custom", "name": d.name, "description": d.desc, "url": url, "method": "POST",
			"parameters": d.schema(), "speak_during_execution": false, "speak_after_execution": true, "timeout_ms": 10000,
			// Every tool is safe to repeat: a retry after a lost answer is
			// answered as the first call (docs/agent-api.md#connect-retell).
			"max_retry": 2})
	}
	prompt, err := t.prompt(r)
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, map[string]any{"general_tools": fns, "system_prompt": prompt})
}

// vapiTools answers the tools as Vapi function tools (the body of
// POST /tool, or an assistant's model.tools entries), ready to paste.
func (t *Tools) vapiTools(w http.ResponseWriter, r *http.Request) error {
	url := baseURL(r) + toolsPath(r) + "/vapi"
	tools := make([]map[string]any, 0, len(toolDefs))
	for _, d := range toolDefs {
		tools = append(tools, map[string]any{"type": "function", "async": false,
			"function": map[string]any{"name": d.name, "description": d.desc, "parameters": d.schema()},
			"server":   map[string]any{"url": url, "timeoutSeconds": 10}})
	}
	prompt, err := t.prompt(r)
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, map[string]any{"tools": tools, "system_prompt": prompt})
}
