package systemtest

import (
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// vapiToolCalls is a tool-calls server message shaped as Vapi's OpenAPI
// (ServerMessageToolCalls, docs snapshot 2026-08-20) and its custom-tools
// guide give it: toolCallList items {id, type, function: {name,
// arguments}}, with arguments a JSON string as the schema types it, the
// same call again under toolWithToolCallList, and the call's id.
func vapiToolCalls(callID, toolCallID, name string, args map[string]any) []byte {
	argJSON, _ := json.Marshal(args)
	call := map[string]any{"id": toolCallID, "type": "function",
		"function": map[string]any{"name": name, "arguments": string(argJSON)}}
	body, _ := json.Marshal(map[string]any{"message": map[string]any{
		"timestamp":    time.Now().UnixMilli(),
		"type":         "tool-calls",
		"toolCallList": []any{call},
		"toolWithToolCallList": []any{map[string]any{
			"type":     "function",
			"function": map[string]any{"name": name, "parameters": map[string]any{"type": "object"}},
			"server":   map[string]any{"url": "https://bookings.example.test/v1/tools/vapi"},
			"messages": []any{},
			"toolCall": call,
		}},
		"artifact":  map[string]any{"messages": []any{}},
		"assistant": map[string]any{"name": "Viewing Assistant"},
		"call":      map[string]any{"id": callID, "orgId": "org-uuid", "type": "webCall"},
	}})
	return body
}

func bookArgs(t *testing.T, hour int) map[string]any {
	return map[string]any{"property_id": "paris-11", "agent_id": "agent-00", "starts_at": slot(t, hour).Format(time.RFC3339),
		"time_zone": "Europe/Paris", "duration_minutes": 30, "expected_policy_version": policyVersion}
}

type vapiAnswer struct {
	Results []struct {
		Name       string `json:"name"`
		ToolCallID string `json:"toolCallId"`
		Result     string `json:"result"`
		Error      string `json:"error"`
	} `json:"results"`
}

// A call that did nothing is Vapi's error, still HTTP 200; a conflict,
// a refusal or a pending outcome stays a result.
func TestVapiNotDoneIsItsErrorField(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}}) + "/v1/tools/vapi"
	noPolicy := bookArgs(t, 10)
	delete(noPolicy, "expected_policy_version")
	var out vapiAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls("call-"+uuid.NewString(), "tc-1", "book", noPolicy), &out,
		"X-Vapi-Secret", "vapi-secret"))
	require.Empty(t, out.Results[0].Result)
	require.True(t, strings.HasPrefix(out.Results[0].Error, "[not_done: missing_field]"), out.Results[0].Error)

	for _, want := range []string{"[confirmed]", "[conflict"} {
		var out vapiAnswer
		require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls("call-"+uuid.NewString(), "tc-2", "book", bookArgs(t, 11)), &out,
			"X-Vapi-Secret", "vapi-secret"))
		require.Empty(t, out.Results[0].Error)
		require.True(t, strings.HasPrefix(out.Results[0].Result, want), out.Results[0].Result)
	}
}

func TestVapiToolCallsAsDocumented(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}}) + "/v1/tools/vapi"
	body := vapiToolCalls("call-"+uuid.NewString(), "call_abc123", "book", bookArgs(t, 10))
	var out vapiAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url, body, &out, "X-Vapi-Secret", "vapi-secret"))
	require.Len(t, out.Results, 1, "one result for the call, not one for each list that names it")
	require.Equal(t, "call_abc123", out.Results[0].ToolCallID)
	require.Equal(t, "book", out.Results[0].Name)
	require.True(t, strings.HasPrefix(out.Results[0].Result, "[confirmed] Confirmed"), out.Results[0].Result)
	require.Equal(t, 1, f.bookings())

	// The guide's own example puts name and an arguments object on the
	// call itself, and toolWithToolCallList alone also carries the call.
	var msg map[string]any
	require.NoError(t, json.Unmarshal(vapiToolCalls("call-"+uuid.NewString(), "call_def456", "book", bookArgs(t, 11)), &msg))
	m := msg["message"].(map[string]any)
	delete(m, "toolCallList")
	require.Equal(t, http.StatusOK, f.call("POST", url, msg, &out, "X-Vapi-Secret", "vapi-secret"))
	require.Equal(t, "call_def456", out.Results[0].ToolCallID)
	require.True(t, strings.HasPrefix(out.Results[0].Result, "[confirmed] Confirmed"), out.Results[0].Result)
	m["toolWithToolCallList"] = []any{}
	m["toolCallList"] = []any{map[string]any{"id": "call_ghi789", "name": "book", "arguments": bookArgs(t, 12)}}
	require.Equal(t, http.StatusOK, f.call("POST", url, msg, &out, "X-Vapi-Secret", "vapi-secret"))
	require.True(t, strings.HasPrefix(out.Results[0].Result, "[confirmed] Confirmed"), out.Results[0].Result)
	require.Equal(t, 3, f.bookings())
}

func TestVapiBodiesThatAreNotToolCallsGet400(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}}) + "/v1/tools/vapi"
	for name, body := range map[string][]byte{
		"not JSON":      []byte(`{"message":`),
		"another type":  []byte(`{"message":{"type":"status-update","status":"in-progress"}}`),
		"no tool calls": []byte(`{"message":{"type":"tool-calls","toolCallList":[]}}`),
		"wrong types":   []byte(`{"message":{"type":"tool-calls","toolCallList":{"id":"x"}}}`),
	} {
		var e edge.Error
		require.Equal(t, http.StatusBadRequest, f.call("POST", url, body, &e, "X-Vapi-Secret", "vapi-secret"), name)
		require.Equal(t, "bad_json", e.Code, name)
		require.NotContains(t, e.Message, "Go struct", name)
		require.NotContains(t, e.Message, "api.", name)
	}
	require.Zero(t, f.bookings())
}

// A Retell custom function with "Payload: args only": the body is the
// arguments, the URL names the tool and X-Call-Id the call.
func TestRetellArgsOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}}) + "/v1/tools/retell/book"
	body, err := json.Marshal(bookArgs(t, 13))
	require.NoError(t, err)
	callID := "call-" + uuid.NewString()
	var out struct {
		Result string `json:"result"`
	}
	for range 2 { // re-issued by the model
		require.Equal(t, http.StatusOK, f.call("POST", url, body, &out, "X-Retell-Signature", retellSign(body, "retell-key"), "X-Call-Id", callID))
		require.True(t, strings.HasPrefix(out.Result, "[confirmed] Confirmed"), out.Result)
	}
	require.Equal(t, 1, f.bookings())
	f.record(workflows.ConversationWorkflowID(callID), "conversation_book_reissued")
	var e edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("POST", url, body, &e, "X-Retell-Signature", retellSign(body, "retell-key")))
	require.Equal(t, "missing_field", e.Code, "no X-Call-Id: %s", e.Message)
	full, err := json.Marshal(map[string]any{"name": "cancel_booking", "call": map[string]string{"call_id": callID}, "args": map[string]string{}})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, f.call("POST", url, full, &e, "X-Retell-Signature", retellSign(full, "retell-key")),
		"a body for another tool at this tool's URL")
}

// select_slot reads the choice back with the property's display name and
// a spoken time, in the call's language; book then confirms it.
func TestSelectSlotReadsBackInTheCallersLanguage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "paris-11", Kind: "property", Capacity: 1,
		TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test", DisplayName: "the Marais flat"}))
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}}) + "/v1/tools/vapi"
	call := "call-" + uuid.NewString()
	args := bookArgs(t, 14)
	delete(args, "expected_policy_version")
	args["language"] = "zh"
	var out vapiAnswer
	require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls(call, "tc-1", "select_slot", args), &out, "X-Vapi-Secret", "vapi-secret"))
	line := out.Results[0].Result
	require.True(t, strings.HasPrefix(line, "[selected] 已选择，尚未预订：the Marais flat，巴黎时间"), line)
	require.Contains(t, line, "下午2点")
	require.Zero(t, f.bookings(), "a read-back books nothing")

	args = bookArgs(t, 14)
	require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls(call, "tc-2", "book", args), &out, "X-Vapi-Secret", "vapi-secret"))
	require.True(t, strings.HasPrefix(out.Results[0].Result, "[confirmed] Confirmed: a viewing of the Marais flat with the agent on "), out.Results[0].Result)
	require.NotContains(t, out.Results[0].Result, "paris-11")

	// In Chinese too, the status the prompt keys on comes first.
	args = bookArgs(t, 16)
	args["language"] = "zh"
	require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls(call, "tc-3", "book", args), &out, "X-Vapi-Secret", "vapi-secret"))
	require.True(t, strings.HasPrefix(out.Results[0].Result, "[confirmed] 已确认：巴黎时间"), out.Results[0].Result)
}

// A property's name in the caller's language, where the agency gives one
// (PUT /v1/resources/{id}, display_names): a French line says the French
// name, an English one display_name; a language without lines is refused
// and changes nothing.
func TestALineSaysThePropertysNameInTheCallersLanguage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}})
	flat := map[string]any{"kind": "property", "capacity": 1, "time_zone": "Europe/Paris", "display_name": "the Marais flat",
		"display_names": map[string]string{"fr-FR": "l'appartement du Marais"}}
	var stored api.ResourceAnswer
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/resources/paris-11", flat, &stored))
	require.Equal(t, map[string]string{"fr": "l'appartement du Marais"}, stored.DisplayNames, "kept under the language whose lines say it")
	flat["display_names"] = map[string]string{"de": "die Marais-Wohnung"}
	var e edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("PUT", url+"/v1/resources/paris-11", flat, &e))
	require.Equal(t, "invalid_resource", e.Code, e.Message)
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/resources/paris-11", nil, &stored))
	require.Equal(t, map[string]string{"fr": "l'appartement du Marais"}, stored.DisplayNames, "the refused PUT wrote nothing")

	for lang, want := range map[string]string{"fr": "Choisi, pas encore réservé : l'appartement du Marais, le ", "en": "Chosen, not booked: the Marais flat on "} {
		args := bookArgs(t, 14)
		delete(args, "expected_policy_version")
		args["language"] = lang
		var out vapiAnswer
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/tools/vapi", vapiToolCalls("call-"+uuid.NewString(), "tc-1", "select_slot", args), &out,
			"X-Vapi-Secret", "vapi-secret"))
		require.Contains(t, out.Results[0].Result, want, lang)
	}
}

// Requests and answers share one shape for time: local_start is the
// caller's wall time, YYYY-MM-DDTHH:MM, in receipts as in requests and
// availability (seconds accepted on the way in); starts_at and ends_at are
// UTC instants everywhere; every receipt has its reference and the line
// to speak as JSON fields.
func TestOneShapeForTimeInEveryAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	start := slot(t, 10)
	local := start.In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04")
	body := bookingBody(uuid.NewString(), start)
	body.StartsAt, body.LocalStart = "", local+":00"
	var r struct {
		LocalStart string    `json:"local_start"`
		StartsAt   time.Time `json:"starts_at"`
		Reference  string    `json:"reference"`
		Spoken     string    `json:"spoken"`
		Status     string    `json:"status"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	require.Equal(t, "confirmed", r.Status)
	require.Equal(t, local, r.LocalStart)
	require.Equal(t, time.UTC, r.StartsAt.Location())
	require.Regexp(t, `^BS-`, r.Reference)
	require.True(t, strings.HasPrefix(r.Spoken, "Confirmed: a viewing of the property"), r.Spoken)

	var av struct {
		Slots []struct {
			StartsAt   string `json:"starts_at"`
			LocalStart string `json:"local_start"`
		} `json:"slots"`
	}
	q := "?property_id=paris-11&agent_id=agent-00&from=" + start.Format(time.RFC3339) + "&to=" + start.Add(4*time.Hour).Format(time.RFC3339)
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/availability"+q, nil, &av))
	require.NotEmpty(t, av.Slots)
	require.True(t, strings.HasSuffix(av.Slots[0].StartsAt, "Z"), av.Slots[0].StartsAt)
	require.Len(t, av.Slots[0].LocalStart, len("2006-01-02T15:04"))

	body = bookingBody(uuid.NewString(), start.Add(time.Hour))
	body.StartsAt, body.LocalStart = "", start.Add(time.Hour).In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04")+":30"
	var e edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("POST", url+"/v1/bookings", body, &e))
	require.Contains(t, e.Message, "seconds")
}

func mustZone(t *testing.T, name string) *time.Location {
	loc, err := localtime.LoadZone(name)
	require.NoError(t, err)
	return loc
}

// A reschedule names what changes: the new local time is enough.
func TestARescheduleWithOnlyTheNewTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	var booked, moved receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, 10)), &booked))
	require.Equal(t, receipt.StatusConfirmed, booked.Status)
	// The receipt says what was booked, from the store's commit.
	require.Equal(t, "paris-11", booked.PropertyRef)
	require.Equal(t, "agent-00", booked.AgentRef)
	require.True(t, booked.StartsAt.Equal(slot(t, 10)))
	require.True(t, booked.EndsAt.Equal(slot(t, 10).Add(30*time.Minute)), "ends_at: %v", booked.EndsAt)
	require.Equal(t, policyVersion, booked.PolicyVersion)
	require.NotNil(t, booked.CommittedAt)
	require.WithinDuration(t, time.Now(), *booked.CommittedAt, time.Minute, "committed_at is the store's commit time")
	local := slot(t, 15).In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04")
	body := map[string]string{"new_request_key": uuid.NewString(), "local_start": local}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/reschedule", body, &moved))
	require.Equal(t, receipt.StatusConfirmed, moved.Status, moved.Reason)
	require.Equal(t, local, moved.LocalStart)
	require.Equal(t, "paris-11", moved.PropertyRef, "the property is the old booking's")
	require.Equal(t, "agent-00", moved.AgentRef, "and so is the agent")
	require.True(t, moved.StartsAt.Equal(slot(t, 15)))
	require.Equal(t, booked.EndsAt.Sub(*booked.StartsAt), moved.EndsAt.Sub(*moved.StartsAt))
}

// What the booking also holds (a key holder) moves with it, and a move
// that names no policy version is decided under the one in force.
func TestARescheduleKeepsTheExtraResources(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "keys-1", Kind: "key_holder", Capacity: 1, TimeZone: "Europe/Paris"}))
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 10))
	body.ExtraResources = []string{"keys-1"}
	var booked, moved receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &booked))
	require.Equal(t, receipt.StatusConfirmed, booked.Status)
	newKey := uuid.NewString()
	move := map[string]string{"new_request_key": newKey, "local_start": slot(t, 15).In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04")}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings/"+key+"/reschedule", move, &moved))
	require.Equal(t, receipt.StatusConfirmed, moved.Status, moved.Reason)
	b, err := f.acts.Store.Lookup(f.ctx, newKey)
	require.NoError(t, err)
	require.Equal(t, []string{"keys-1"}, b.Intent.ExtraResources, "the key holder moved with the booking")
}

// A local time the clocks skip, or pass twice, is asked about: the tool
// names both candidates, spoken, and books nothing.
func TestADSTGapIsAskedAboutWithBothCandidates(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{VapiSecret: "vapi-secret"}}) + "/v1/tools/vapi"
	for local, want := range map[string][]string{
		"2027-03-28T02:30": {"[not_done: nonexistent_local_time]", "1:30 a.m.", "3:30 a.m."},
		"2027-10-31T02:30": {"[not_done: ambiguous_local_time]", "2:30 a.m.", "twice"},
	} {
		args := bookArgs(t, 10)
		delete(args, "starts_at")
		args["local_start"] = local
		var out vapiAnswer
		require.Equal(t, http.StatusOK, f.call("POST", url, vapiToolCalls("call-"+uuid.NewString(), "tc-1", "book", args), &out, "X-Vapi-Secret", "vapi-secret"))
		for _, w := range want {
			require.Contains(t, out.Results[0].Result, w, local)
		}
	}
	require.Zero(t, f.bookings())
}

// A call in French hears French, its status tag unchanged.
func TestACallInFrench(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}}) + "/v1/tools/retell/book"
	args := bookArgs(t, 16)
	args["language"] = "fr"
	body, err := json.Marshal(args)
	require.NoError(t, err)
	var out struct {
		Result string `json:"result"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", url, body, &out, "X-Retell-Signature", retellSign(body, "retell-key"), "X-Call-Id", "call-"+uuid.NewString()))
	require.True(t, strings.HasPrefix(out.Result, "[confirmed] Confirmé : une visite de ce bien avec l'agent le "), out.Result)
	require.Contains(t, out.Result, " à 16 h, heure de Paris.")
}
