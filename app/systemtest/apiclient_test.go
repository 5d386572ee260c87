package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/apiclient"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// recorder remembers every call a client made and what it was answered.
type recorder struct {
	mu    sync.Mutex
	calls []string // "METHOD /path STATUS"
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		r.mu.Lock()
		r.calls = append(r.calls, req.Method+" "+req.URL.Path+" "+res.Status[:3])
		r.mu.Unlock()
	}
	return res, err
}

// documented is every operation of the OpenAPI document with the statuses
// it documents.
func documented(t *testing.T, url string) map[string][]string {
	t.Helper()
	res, err := http.Get(url + "/openapi.json")
	require.NoError(t, err)
	defer res.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	out := map[string][]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			for status := range op.Responses {
				out[strings.ToUpper(method)+" "+path] = append(out[strings.ToUpper(method)+" "+path], status)
			}
		}
	}
	return out
}

func fits(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i], "{") && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// A client generated from the OpenAPI document calls every route of the
// running API, and every answer is one the document describes.
func TestTheGeneratedClientCallsEveryRoute(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	rec := &recorder{}
	c, err := apiclient.NewClientWithResponses(url, apiclient.WithHTTPClient(rec),
		apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+apiKey)
			return nil
		}))
	require.NoError(t, err)
	ctx := f.ctx
	start := slot(t, 10)
	p := func(s string) *string { return &s }
	n := func(i int) *int { return &i }

	_, err = c.GetLivenessWithResponse(ctx)
	require.NoError(t, err)
	_, err = c.GetReadinessWithResponse(ctx)
	require.NoError(t, err)
	_, err = c.GetOpenAPIDocumentWithResponse(ctx)
	require.NoError(t, err)
	av, err := c.GetAvailabilityWithResponse(ctx, &apiclient.GetAvailabilityParams{PropertyId: "paris-11", AgentId: p("agent-00"),
		From: start, To: start.Add(4 * time.Hour)})
	require.NoError(t, err)
	require.NotNil(t, av.JSON200)
	key := uuid.NewString()
	booked, err := c.CreateBookingWithResponse(ctx, apiclient.Booking{RequestKey: key, PropertyId: "paris-11", AgentId: p("agent-00"),
		StartsAt: &start, TimeZone: "Europe/Paris", DurationMinutes: n(30), ExpectedPolicyVersion: policyVersion,
		Contact: &struct {
			Email      *string                         `json:"email,omitempty"`
			KeepOnFile *bool                           `json:"keep_on_file,omitempty"`
			Language   *string                         `json:"language,omitempty"`
			Name       *string                         `json:"name,omitempty"`
			Notify     *apiclient.BookingContactNotify `json:"notify,omitempty"`
			Phone      *string                         `json:"phone,omitempty"`
		}{Name: p("Ada")}})
	require.NoError(t, err)
	require.Equal(t, "confirmed", string(booked.JSON200.Status))
	_, err = c.ListBookingsWithResponse(ctx, &apiclient.ListBookingsParams{Reference: booked.JSON200.Reference})
	require.NoError(t, err)
	_, err = c.GetBookingWithResponse(ctx, key)
	require.NoError(t, err)
	_, err = c.GetContactWithResponse(ctx, key)
	require.NoError(t, err)
	_, err = c.EraseContactWithResponse(ctx, key)
	require.NoError(t, err)
	newKey := uuid.NewString()
	_, err = c.RescheduleBookingWithResponse(ctx, key, apiclient.Reschedule{NewRequestKey: newKey,
		LocalStart: p(start.Add(2 * time.Hour).In(mustZone(t, "Europe/Paris")).Format("2006-01-02T15:04"))})
	require.NoError(t, err)
	_, err = c.CancelBookingWithResponse(ctx, newKey)
	require.NoError(t, err)
	outcome, err := c.RecordOutcomeWithResponse(ctx, newKey, apiclient.Outcome{Outcome: apiclient.OutcomeOutcomeCancelledByAgency, Note: p("the agent was ill")})
	require.NoError(t, err)
	require.NotNil(t, outcome.JSON200, string(outcome.Body))
	require.True(t, outcome.JSON200.Changed)
	require.NoError(t, f.acts.Store.UpsertResource(ctx, booking.Resource{ID: "agent-01", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	staffed := uuid.NewString()
	later := start.Add(4 * time.Hour)
	_, err = c.CreateBookingWithResponse(ctx, apiclient.Booking{RequestKey: staffed, PropertyId: "paris-11", AgentId: p("agent-00"),
		StartsAt: &later, TimeZone: "Europe/Paris", DurationMinutes: n(30), ExpectedPolicyVersion: policyVersion})
	require.NoError(t, err)
	moved, err := c.ReassignBookingWithResponse(ctx, staffed, apiclient.Reassign{AgentId: "agent-01"})
	require.NoError(t, err)
	require.NotNil(t, moved.JSON200, string(moved.Body))
	require.Equal(t, "confirmed", string(moved.JSON200.Status))
	hold := true
	_, err = c.CreateIntentWithResponse(ctx, apiclient.Intent{ConversationId: "conv-" + uuid.NewString(), PropertyId: "paris-11",
		AgentId: p("agent-00"), StartsAt: &start, TimeZone: "Europe/Paris", DurationMinutes: n(30), Hold: &hold,
		ExpectedPolicyVersion: p(policyVersion)})
	require.NoError(t, err)
	_, err = c.PutResourceWithResponse(ctx, "keys-1", apiclient.Resource{Kind: "key_holder", Capacity: 1, TimeZone: "Europe/Paris",
		DisplayName: p("the key desk")})
	require.NoError(t, err)
	_, err = c.PutPolicyWithResponse(ctx, apiclient.Policy{Version: "policy-2", SlotMinutes: 30, OpensAt: "08:00", ClosesAt: "20:00",
		HoldTtlMinutes: n(10)})
	require.NoError(t, err)
	_, err = c.GetAttentionWithResponse(ctx)
	require.NoError(t, err)
	pol, err := c.GetPolicyWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, 1440, *pol.JSON200.ReminderMinutes, "a policy that names no reminder reminds a day ahead")
	_, err = c.PutPoolWithResponse(ctx, "team", apiclient.Pool{Members: []string{"agent-00"}})
	require.NoError(t, err)
	_, err = c.GetPoolWithResponse(ctx, "team")
	require.NoError(t, err)
	_, err = c.GetResourceWithResponse(ctx, "keys-1")
	require.NoError(t, err)
	to := start.Add(24 * time.Hour)
	listed, err := c.ListBookingsWithResponse(ctx, &apiclient.ListBookingsParams{PropertyId: p("paris-11"), From: &start, To: &to})
	require.NoError(t, err)
	require.NotNil(t, listed.JSON200)
	page, err := listed.JSON200.AsBookingList()
	require.NoError(t, err)
	require.NotEmpty(t, page.Bookings)
	hook, err := c.PutWebhookWithResponse(ctx, "ep-"+uuid.NewString()[:8], apiclient.Webhook{Url: "http://127.0.0.1:1/hooks"})
	require.NoError(t, err)
	require.NotNil(t, hook.JSON201)
	_, err = c.ListWebhooksWithResponse(ctx)
	require.NoError(t, err)
	hookID := hook.JSON201.Id
	paused, err := c.PauseWebhookWithResponse(ctx, hookID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, paused.StatusCode())
	_, err = c.ResumeWebhookWithResponse(ctx, hookID)
	require.NoError(t, err)
	rotated, err := c.RotateWebhookSecretWithResponse(ctx, hookID)
	require.NoError(t, err)
	require.NotNil(t, rotated.JSON200)
	_, err = c.DeleteWebhookWithResponse(ctx, hookID)
	require.NoError(t, err)
	ready, err := c.GetOpsReadinessWithResponse(ctx)
	require.NoError(t, err)
	require.NotNil(t, ready.JSON200)
	_, err = c.GetTimelineWithResponse(ctx, key)
	require.NoError(t, err)
	_, err = c.ExportRetellFunctionsWithResponse(ctx, &apiclient.ExportRetellFunctionsParams{})
	require.NoError(t, err)
	_, err = c.ExportVapiToolsWithResponse(ctx, &apiclient.ExportVapiToolsParams{})
	require.NoError(t, err)
	call := "call-" + uuid.NewString()
	_, err = c.CallRetellFunctionWithResponse(ctx, map[string]any{"name": "booking_status", "call": map[string]any{"call_id": call},
		"args": map[string]any{"reference": *booked.JSON200.Reference}})
	require.NoError(t, err)
	// The args-only body is one of the ToolArgs_* unions; oapi-codegen's
	// request-body type for a union drops its MarshalJSON (it sends {}),
	// so the body goes as the tool's arguments, raw.
	args, err := json.Marshal(apiclient.ToolArgsBookingStatus{Reference: booked.JSON200.Reference})
	require.NoError(t, err)
	status, err := c.CallRetellToolWithBodyWithResponse(ctx, "booking_status", &apiclient.CallRetellToolParams{XCallId: &call},
		"application/json", bytes.NewReader(args))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status.StatusCode(), string(status.Body))
	require.Contains(t, string(status.Body), "[not_done: not_found]", "a booking this call did not make or find (L6)")
	_, err = c.CallVapiToolsWithResponse(ctx, map[string]any{"message": map[string]any{"type": "tool-calls",
		"call": map[string]any{"id": call}, "toolCallList": []any{map[string]any{"id": "tc-1", "type": "function",
			"function": map[string]any{"name": "booking_status", "arguments": map[string]any{"reference": *booked.JSON200.Reference}}}}}})
	require.NoError(t, err)
	// MCP's Streamable HTTP wants both media types accepted.
	accept := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Accept", "application/json, text/event-stream")
		return nil
	}
	_, err = c.CallMCPWithResponse(ctx, &apiclient.CallMCPParams{XCallId: &call}, map[string]any{"jsonrpc": "2.0", "id": 1,
		"method": "tools/call", "params": map[string]any{"name": "booking_status", "arguments": map[string]any{"reference": *booked.JSON200.Reference}}},
		accept)
	require.NoError(t, err)
	prof, err := c.PutProfileWithResponse(ctx, apiclient.Profile{Name: "Agence Lumière", CallbackPhone: "+33140000000"})
	require.NoError(t, err)
	require.NotNil(t, prof.JSON200, string(prof.Body))
	got, err := c.GetProfileWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, "+33140000000", got.JSON200.CallbackPhone)
	revoked, err := c.RevokeLinksWithResponse(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, revoked.JSON200, string(revoked.Body))
	form, signed := f.signedReply(ctx, c, url+"/v1/tools/twilio/messages")
	replied, err := c.ReceiveTwilioMessageWithBodyWithResponse(ctx, "application/x-www-form-urlencoded", form, signed)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, replied.StatusCode(), string(replied.Body))

	// The platform's routes, under a platform key of their own.
	kr, secret := keysOf(t, apikey.Key{Name: "platform", Scopes: []apikey.Scope{apikey.ScopePlatform}},
		apikey.Key{Name: "lyon", Scopes: []apikey.Scope{apikey.ScopeAgent, apikey.ScopeAdmin}, Agency: "lyon"})
	purl := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: kr}})
	pc, err := apiclient.NewClientWithResponses(purl, apiclient.WithHTTPClient(rec),
		apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+secret["platform"])
			return nil
		}))
	require.NoError(t, err)
	made, err := pc.PutAgencyWithResponse(ctx, "lyon", apiclient.AgencyBody{Name: p("Agence de Lyon")})
	require.NoError(t, err)
	require.NotNil(t, made.JSON201, string(made.Body))
	list, err := pc.ListAgenciesWithResponse(ctx)
	require.NoError(t, err)
	require.NotNil(t, list.JSON200, string(list.Body))
	f.agencyCalls(ctx, purl, secret["lyon"], rec)

	ops := documented(t, url)
	for op, statuses := range ops {
		method, pattern, _ := strings.Cut(op, " ")
		var seen bool
		for _, c := range rec.calls {
			parts := strings.Fields(c)
			if parts[0] != method || !fits(pattern, parts[1]) || (pattern == "/v1/bookings/{request_key}" && strings.Count(parts[1], "/") != 3) {
				continue
			}
			seen = true
			require.Contains(t, statuses, parts[2], "%s answered %s, which the document does not describe", c, parts[2])
			// Every call above is a good one: a refusal would be a bug the
			// document happens to describe.
			require.Equal(t, byte('2'), parts[2][0], "%s answered %s to a good call", c, parts[2])
		}
		require.True(t, seen, "the generated client called %s", op)
	}
}

// agencyCalls calls, as the generated client, the routes of an agency's
// own: its admin sets its platforms' secrets, its platforms call its tool
// URLs signed with them, and its admin removes one.
func (f *fixture) agencyCalls(ctx context.Context, url, key string, rec *recorder) {
	f.t.Helper()
	c, err := apiclient.NewClientWithResponses(url, apiclient.WithHTTPClient(rec),
		apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	require.NoError(f.t, err)
	const retellKey, vapiSecret = "lyon-retell-key-0123456789", "lyon-vapi-secret-0123456789"
	set, err := c.PutPlatformSecretWithResponse(ctx, apiclient.PutPlatformSecretParamsPlatformRetell, apiclient.PlatformSecretBody{Secret: retellKey})
	require.NoError(f.t, err)
	require.NotNil(f.t, set.JSON200, string(set.Body))
	_, err = c.PutPlatformSecretWithResponse(ctx, apiclient.PutPlatformSecretParamsPlatformVapi, apiclient.PlatformSecretBody{Secret: vapiSecret})
	require.NoError(f.t, err)
	listed, err := c.ListPlatformSecretsWithResponse(ctx)
	require.NoError(f.t, err)
	require.NotNil(f.t, listed.JSON200, string(listed.Body))

	signed := func(body []byte) apiclient.RequestEditorFn {
		return func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-Retell-Signature", retellSign(body, retellKey))
			req.Header.Set("X-Vapi-Secret", vapiSecret)
			return nil
		}
	}
	call := "call-" + uuid.NewString()
	full := []byte(`{"name": "booking_status", "call": {"call_id": "` + call + `"}, "args": {"reference": "BS-AAAA-AAAA"}}`)
	_, err = c.CallAgencyRetellFunctionWithBodyWithResponse(ctx, "lyon", "application/json", bytes.NewReader(full), signed(full))
	require.NoError(f.t, err)
	args := []byte(`{"reference": "BS-AAAA-AAAA"}`)
	_, err = c.CallAgencyRetellToolWithBodyWithResponse(ctx, "lyon", "booking_status", &apiclient.CallAgencyRetellToolParams{XCallId: &call},
		"application/json", bytes.NewReader(args), signed(args))
	require.NoError(f.t, err)
	vapi := []byte(`{"message": {"type": "tool-calls", "call": {"id": "` + call + `"}, "toolCallList": [{"id": "tc-1", "type": "function",
		"function": {"name": "booking_status", "arguments": {"reference": "BS-AAAA-AAAA"}}}]}}`)
	_, err = c.CallAgencyVapiToolsWithBodyWithResponse(ctx, "lyon", "application/json", bytes.NewReader(vapi), signed(vapi))
	require.NoError(f.t, err)
	_, err = c.DeletePlatformSecretWithResponse(ctx, apiclient.DeletePlatformSecretParamsPlatformVapi)
	require.NoError(f.t, err)

	var account apiclient.MirrorAccount
	require.NoError(f.t, account.FromHubSpotAccount(apiclient.HubSpotAccount{Token: "pat-eu1-lyon"}))
	accounts, err := c.PutMirrorAccountWithResponse(ctx, apiclient.PutMirrorKindHubSpot, account)
	require.NoError(f.t, err)
	require.NotNil(f.t, accounts.JSON200, string(accounts.Body))
	require.Contains(f.t, accounts.JSON200.Set, apiclient.MirrorKindHubSpot)
	_, err = c.ListMirrorAccountsWithResponse(ctx)
	require.NoError(f.t, err)
	_, err = c.DeleteMirrorAccountWithResponse(ctx, apiclient.DeleteMirrorKindHubSpot)
	require.NoError(f.t, err)
	form, byTwilio := f.signedReply(ctx, c, url+"/v1/agencies/lyon/tools/twilio/messages")
	replied, err := c.ReceiveAgencyTwilioMessageWithBodyWithResponse(ctx, "lyon", "application/x-www-form-urlencoded", form, byTwilio)
	require.NoError(f.t, err)
	require.Equal(f.t, http.StatusOK, replied.StatusCode(), string(replied.Body))
}
