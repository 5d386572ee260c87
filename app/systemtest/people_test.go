package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// property_info says what the agency approved, with its source, and
// nothing else; a fact without its source is refused and nothing changes.
func TestPropertyInfoAnswersOnlyApprovedFacts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	property := api.ResourceBody{Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test",
		Facts: []booking.Fact{{Topic: "Parking", Answer: "One space in the courtyard comes with the flat.", Source: "lease, clause 4",
			ApprovedBy: "the landlord"}}}
	bad := property
	bad.Facts = []booking.Fact{{Topic: "floor", Answer: "Third floor, no lift."}}
	status, body := f.putResource(url, "paris-11", bad)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_resource", body["code"])
	require.Contains(t, body["message"], "source")
	status, _ = f.putResource(url, "paris-11", property)
	require.Equal(t, http.StatusOK, status)
	var stored api.ResourceAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/resources/paris-11", nil, &stored))
	require.Len(t, stored.Facts, 1)
	require.False(t, stored.Facts[0].ApprovedAt.IsZero(), "approved by the PUT")
	require.Equal(t, "test", stored.Facts[0].ApprovedBy, "by the key that wrote it, whatever the body says (L7)")

	call := "call-" + uuid.NewString()
	parking := f.retellTool(url, call, "property_info", map[string]any{"property_id": "paris-11", "topic": "parking"})
	require.True(t, strings.HasPrefix(parking, "[fact] One space in the courtyard comes with the flat. For the tools: source lease, clause 4, approved "), parking)
	pets := f.retellTool(url, call, "property_info", map[string]any{"property_id": "paris-11", "topic": "pets", "language": "fr"})
	require.True(t, strings.HasPrefix(pets, "[no_fact] Aucune réponse approuvée sur ce point pour ce bien"), pets)
	require.Contains(t, pets, "approved topics: parking")
}

// request_human leaves a callback in the store, once however often it
// is sent, announces it to the webhooks and shows in ops attention.
func TestRequestHumanLeavesACallback(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	f.register(url, rc)
	call := "call-" + uuid.NewString()
	booked := f.retellTool(url, call, "book", bookArgs(t, 10))
	require.True(t, strings.HasPrefix(booked, "[confirmed]"), booked)

	bad := f.retellTool(url, call, "request_human", map[string]any{"topic": "gossip", "reason": "x"})
	require.True(t, strings.HasPrefix(bad, "[not_done: missing_field]"), bad)
	ask := map[string]any{"topic": "eligibility", "reason": "Can I rent it with a guarantor abroad?"}
	for range 2 { // re-issued by the model
		line := f.retellTool(url, call, "request_human", ask)
		require.True(t, strings.HasPrefix(line, "[handoff_requested] A person from the agency will call the caller back"), line)
		require.Contains(t, line, "transfer it now")
	}
	var a api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Len(t, a.Handoffs, 1)
	h := a.Handoffs[0]
	require.Equal(t, "retell/"+call, h.ConversationID, "the call, as the platform that signed it names it")
	require.Equal(t, "eligibility", h.Topic)
	require.Equal(t, "Can I rent it with a guarantor abroad?", h.Reason)
	require.Len(t, h.RequestKeys, 1, "the call's booking")
	f.eventually(func() bool { return rc.count("handoff.requested") == 1 }, "handoff.requested delivered once")

	// Called back, it leaves attention; it cannot be closed twice.
	sc := f.sagas()
	done, err := sc.CalledBack(f.ctx, h.ID, "called back, guarantor explained")
	require.NoError(t, err)
	require.NotNil(t, done.ResolvedAt)
	_, err = sc.CalledBack(f.ctx, h.ID, "again")
	require.ErrorIs(t, err, store.ErrHandoffNotOpen)
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Empty(t, a.Handoffs)
}

// request_human keeps the number to call the caller back on (caller ID,
// or one they give) and when: ops attention shows it, an agent key can't
// read attention, the webhook says only that there is one, and erasing
// the caller's contact erases it.
func TestRequestHumanKeepsACallbackNumberForOpsOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key", VapiSecret: "vapi-secret"}})
	f.register(url, &receiver{t: t, got: map[string]int{}, types: map[string]string{}})
	call := "vapi-" + uuid.NewString()
	args := bookArgs(t, 10)
	args["contact"] = map[string]string{"name": "Marie Dupont", "phone": "+33612345678"}
	booked := f.vapiLine(url, vapiPhoneCall(call, "+33612345678", "book", args))
	require.True(t, strings.HasPrefix(booked, "[confirmed]"), booked)
	line := f.vapiLine(url, vapiPhoneCall(call, "+33612345678", "request_human",
		map[string]any{"topic": "advice", "reason": "Which deposit scheme applies?", "callback_window": "weekday mornings"}))
	require.True(t, strings.HasPrefix(line, "[handoff_requested]"), line)
	require.NotContains(t, line, "No number to call back")
	web := f.vapiLine(url, vapiToolCalls("vapi-"+uuid.NewString(), "tc-1", "request_human", map[string]any{"topic": "other", "reason": "Call me"}))
	require.Contains(t, web, "No number to call back is recorded: ask the caller for one")
	bad := f.vapiLine(url, vapiToolCalls("vapi-"+uuid.NewString(), "tc-2", "request_human", map[string]any{"topic": "other", "reason": "Call me", "callback_number": "call me maybe"}))
	require.True(t, strings.HasPrefix(bad, "[not_done: invalid_contact]"), bad)

	var a api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	byTopic := map[string]booking.Handoff{}
	for _, h := range a.Handoffs {
		byTopic[h.Topic] = h
	}
	require.Len(t, byTopic, 2, "the refused one recorded nothing")
	require.Equal(t, &booking.Callback{Number: "+33612345678", Window: "weekday mornings"}, byTopic["advice"].Callback)
	require.True(t, byTopic["advice"].HasCallback)
	require.Nil(t, byTopic["other"].Callback)
	agent, keys := agentKey(t, "agent-only")
	agentURL := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: keys}})
	require.Equal(t, http.StatusForbidden, f.call("GET", agentURL+"/v1/ops/attention", nil, nil, "Authorization", "Bearer "+agent))

	var payload string
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT payload::text FROM webhook_delivery
WHERE event_type = 'handoff.requested' AND (payload->>'handoff_id')::bigint = $1`, byTopic["advice"].ID).Scan(&payload))
	require.Contains(t, payload, `"has_callback_number": true`)
	require.NotContains(t, payload, "612345678")

	key := byTopic["advice"].RequestKeys[0]
	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/bookings/"+key+"/contact", nil, nil))
	var after api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &after))
	idx := slices.IndexFunc(after.Handoffs, func(h booking.Handoff) bool { return h.ID == byTopic["advice"].ID })
	require.GreaterOrEqual(t, idx, 0, "still open")
	require.Nil(t, after.Handoffs[idx].Callback, "erased with the contact")
	require.False(t, after.Handoffs[idx].HasCallback)
}

// One key's hand-offs are bounded for every API process: each reaches the
// agency's staff and every webhook receiver, and new calls are free to
// invent, so the key's hour holds -handoffs-per-key-hour of them; past
// it the call is told to ring the agency, and nothing is recorded.
func TestHandoffsAreBoundedPerKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tools := voice.Config{RetellKey: "retell-key", HandoffsPerKeyHour: 2}
	first, second := f.serveAPI(app.EdgeConfig{Tools: tools}), f.serveAPI(app.EdgeConfig{Tools: tools}) // two API processes
	ask := map[string]any{"topic": "eligibility", "reason": "Can I rent it with a guarantor abroad?"}
	for _, url := range []string{first, second} {
		line := f.retellTool(url, "call-"+uuid.NewString(), "request_human", ask)
		require.True(t, strings.HasPrefix(line, "[handoff_requested]"), line)
	}
	over := f.retellTool(first, "call-"+uuid.NewString(), "request_human", ask)
	require.Equal(t, "[not_done: rate_limited] NOT done: this line has asked for too many call-backs this hour; tell the caller to call the agency directly.", over)
	var n int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM handoff`).Scan(&n))
	require.Equal(t, 2, n)
}
