package systemtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/callerpage"
	"github.com/bookingsaga/bookingsaga/api/texts"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// scoped is a conversation id as the API keys it for calls under the
// tests' key (edge.Conversation); a Retell or Vapi call signed by its
// platform is scoped by "retell" or "vapi" instead.
func scoped(id string) string { return "test/" + id }

// agentKey is a new agent key of its own, and the keyring that holds it
// alone.
func agentKey(t *testing.T, name string) (secret string, keys *apikey.Keyring) {
	t.Helper()
	secret, k, err := apikey.NewKey(name, apikey.ScopeAgent)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, apikey.SaveKey(file, k, false))
	keys, err = apikey.LoadKeyring(file)
	require.NoError(t, err)
	return secret, keys
}

// apiKey is the tests' API key, with every scope, and apiKeys holds it.
var apiKey, apiKeys = func() (string, *apikey.Keyring) {
	secret, k, err := apikey.NewKey("test", apikey.ScopeAgent, apikey.ScopeAdmin, apikey.ScopeOps)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "bs-keys-")
	if err == nil {
		err = apikey.SaveKey(filepath.Join(dir, "keys.json"), k, false)
	}
	var keys *apikey.Keyring
	if err == nil {
		keys, err = apikey.LoadKeyring(filepath.Join(dir, "keys.json"))
	}
	if err != nil {
		panic(err)
	}
	return secret, keys
}()

// serveAPI serves the agent edge over the fixture's worker, with the
// tests' key and the fixture's store unless cfg names its own.
func (f *fixture) serveAPI(cfg app.EdgeConfig, reads ...desk.Catalog) string {
	if cfg.Keys == nil {
		cfg.Keys = apiKeys
	}
	vault := store.New(f.pool, store.Config{})
	set := &cfg.Settings
	if set.Names == nil {
		set.Names = speech.NewNames(vault)
		require.NoError(f.t, set.Names.Refresh(f.ctx))
	}
	if set.Bookings == nil {
		set.Bookings = vault
	}
	if set.Catalogue == nil {
		set.Catalogue = f.catalog
	}
	if cfg.StoreZoneRules == nil {
		cfg.StoreZoneRules = vault.LatestZoneRules
	}
	if cfg.REST.Contacts == nil {
		cfg.REST.Contacts = vault
	}
	if cfg.REST.Egress == nil {
		cfg.REST.Egress = &egress.Guard{AllowLoopback: true} // receivers are local test servers
	}
	if cfg.REST.Webhooks == nil {
		cfg.REST.Webhooks = vault
	}
	if cfg.Tools.FindBudget == nil {
		cfg.Tools.FindBudget = vault
	}
	if cfg.Tools.Contacts == nil {
		cfg.Tools.Contacts = vault
	}
	if cfg.Agencies == nil {
		cfg.Agencies = vault
	}
	if cfg.REST.Agencies == nil {
		cfg.REST.Agencies = vault
	}
	if cfg.REST.PlatformSecrets == nil {
		cfg.REST.PlatformSecrets = vault
	}
	if cfg.Texts.Replies == nil {
		cfg.Texts = texts.Config{Replies: vault, Signed: f.mirrors.TextsSigned(f.catalog.Accounts), Profiles: vault, PublicURL: f.acts.PublicURL}
	}
	if cfg.REST.MirrorAccounts == nil {
		cfg.REST.MirrorAccounts, cfg.REST.CheckAccount = app.AccountsWriter(vault, f.catalog.Accounts), f.mirrors.CheckAccount
	}
	if cfg.REST.Profiles == nil {
		cfg.REST.Profiles, cfg.REST.Links = vault, vault
	}
	if cfg.Page.Links == nil {
		cfg.Page = callerpage.Config{Links: vault, Profiles: vault}
	}
	if cfg.Tools.Secrets == nil {
		cfg.Tools.Secrets = vault
	}
	var cat desk.Catalog = f.catalog
	if len(reads) > 0 {
		cat = reads[0]
	}
	sc := desk.New(f.client, cat, desk.Options{Sagas: sagaclient.Options{TaskQueue: f.queue, Settings: f.settings, Contacts: vault},
		OnPending: app.NotePending(vault, zap.NewNop())})
	srv := httptest.NewUnstartedServer(app.Edge(sc, cfg))
	if f.publicLn != nil {
		srv.Listener.Close()
		srv.Listener, f.publicLn = f.publicLn, nil
	}
	srv.Start()
	f.t.Cleanup(srv.Close)
	return srv.URL
}

// call sends one request and decodes the JSON answer into out.
func (f *fixture) call(method, url string, body any, out any, header ...string) int {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(f.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, url, rd)
	require.NoError(f.t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer res.Body.Close()
	if out != nil {
		require.NoError(f.t, json.NewDecoder(res.Body).Decode(out))
	}
	return res.StatusCode
}

func bookingBody(key string, start time.Time) api.BookingBody {
	return api.BookingBody{RequestKey: key, ExpectedPolicyVersion: policyVersion, Slot: edge.Slot{PropertyID: "paris-11",
		AgentID: "agent-00", StartsAt: start.Format(time.RFC3339), TimeZone: "Europe/Paris", DurationMinutes: 30}}
}

func TestHTTPDuplicatesAndCompetitors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	dup := make([]receipt.Receipt, 5)
	var wg sync.WaitGroup
	for i := range dup {
		wg.Go(func() {
			require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, 9)), &dup[i]))
		})
	}
	wg.Wait()
	for _, r := range dup {
		r.ProviderEventID = dup[0].ProviderEventID
		require.Equal(t, dup[0], r)
	}
	require.Equal(t, receipt.StatusConfirmed, dup[0].Status)

	race := make([]receipt.Receipt, 20)
	for i := range race {
		wg.Go(func() {
			require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(uuid.NewString(), slot(t, 12)), &race[i]))
		})
	}
	wg.Wait()
	// Twenty commits at once on a loaded machine may outlast the commit
	// wait: such a one is answered pending, honestly, and settles later.
	settled := map[int]bool{}
	for i, r := range race {
		if r.Status == receipt.StatusPending {
			settled[i] = true
			f.eventually(func() bool {
				return f.call("GET", url+"/v1/bookings/"+r.RequestKey, nil, &race[i]) == http.StatusOK && race[i].Status != receipt.StatusPending
			}, "the pending answer settles")
		}
	}
	// Alternatives are looked up within what is left of the call's bound:
	// a conflict decided late in it is answered in time without them
	// (CI met that once), so at least one, not every one, carries them.
	count := map[receipt.Status]int{}
	offered := 0
	for i, r := range race {
		count[r.Status]++
		if r.Status == receipt.StatusConflict && !settled[i] { // a booking call's answer, not a later read
			require.False(t, r.Reason.Retryable)
			if len(r.Alternatives) > 0 {
				offered++
			}
		}
	}
	require.Positive(t, offered, "a conflict offers fresh alternatives")
	require.Equal(t, map[receipt.Status]int{receipt.StatusConfirmed: 1, receipt.StatusConflict: 19}, count)
	require.Equal(t, 2, f.bookings())

	var got receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key, nil, &got))
	require.Equal(t, dup[0].BookingID, got.BookingID)
	require.Equal(t, http.StatusNotFound, f.call("GET", url+"/v1/bookings/"+uuid.NewString(), nil, &edge.Error{}))
}

func TestHTTPIntentRule(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	intent := func(conv string, hour int) string {
		var out struct {
			RequestKey string `json:"request_key"`
		}
		s := bookingBody("", slot(t, hour)).Slot
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: conv, Slot: s}, &out))
		require.NotEmpty(t, out.RequestKey)
		return out.RequestKey
	}
	// Conversation ids are unique per run: the Temporal server outlives a
	// test when it runs again (-count).
	conv1, conv2 := "conv-"+uuid.NewString(), "conv-"+uuid.NewString()
	first := intent(conv1, 10)
	require.Equal(t, first, intent(conv1, 10), "the same choice again, e.g. a re-issued tool call")
	require.NotEqual(t, first, intent(conv1, 11), "a new choice")
	require.NotEqual(t, first, intent(conv2, 10), "another conversation")
}

func retellSign(body []byte, key string) string {
	ts := fmt.Sprint(time.Now().UnixMilli())
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	mac.Write([]byte(ts))
	return "v=" + ts + ",d=" + hex.EncodeToString(mac.Sum(nil))
}

func TestVoicePlatformRoundTrips(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key", VapiSecret: "vapi-secret"}})
	args := bookArgs(t, 15)
	args["contact"] = map[string]string{"name": "Ada", "phone": "+33 6 12 34 56 78"}
	body, err := json.Marshal(map[string]any{"name": "book", "call": map[string]string{"call_id": "call-" + uuid.NewString()}, "args": args})
	require.NoError(t, err)
	var out struct {
		Result string `json:"result"`
	}
	for range 2 { // the model re-issues the same tool call
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/tools/retell", body, &out, "X-Retell-Signature", retellSign(body, "retell-key")))
		require.True(t, strings.HasPrefix(out.Result, "[confirmed] Confirmed"), out.Result)
	}
	require.Equal(t, 1, f.bookings(), "a re-issued book is the same booking")
	require.Equal(t, http.StatusUnauthorized, f.call("POST", url+"/v1/tools/retell", body, &edge.Error{}, "X-Retell-Signature", retellSign(body, "wrong")))

	vapi := map[string]any{"message": map[string]any{"type": "tool-calls", "call": map[string]string{"id": "call-" + uuid.NewString()},
		"toolCalls": []map[string]any{
			{"id": "tc-1", "type": "function", "function": map[string]any{"name": "check_availability",
				"arguments": map[string]string{"property_id": "paris-11", "agent_id": "agent-00", "time_zone": "Europe/Paris", "date": slot(t, 9).Format("2006-01-02")}}},
			{"id": "tc-2", "type": "function", "function": map[string]any{"name": "book", "arguments": args}},
		}}}
	var results struct {
		Results []struct {
			ToolCallID string `json:"toolCallId"`
			Result     string `json:"result"`
		} `json:"results"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/tools/vapi", vapi, &results, "X-Vapi-Secret", "vapi-secret"))
	require.Len(t, results.Results, 2)
	require.Equal(t, "tc-1", results.Results[0].ToolCallID)
	require.Contains(t, results.Results[0].Result, "Free:")
	require.NotContains(t, results.Results[0].Result, "15:00", "the booked time is not offered")
	require.True(t, strings.HasPrefix(results.Results[1].Result, "[conflict: slot_taken] "), "another call for the taken slot is a conflict: %s", results.Results[1].Result)
	require.Contains(t, results.Results[1].Result, "is no longer free. Free instead:", "spoken with its alternatives")
	require.Equal(t, http.StatusUnauthorized, f.call("POST", url+"/v1/tools/vapi", vapi, &edge.Error{}, "X-Vapi-Secret", "nope"))
}

func TestHTTPBadInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Settings: edge.Settings{MaxBody: 4 << 10}}})
	ok := bookingBody(uuid.NewString(), slot(t, 16))
	edit := func(fn func(*api.BookingBody)) api.BookingBody {
		b := ok
		fn(&b)
		return b
	}
	cases := []struct {
		name string
		body any
		code string
	}{
		{"bad json", []byte(`{"request_key":`), "bad_json"},
		{"no key", edit(func(b *api.BookingBody) { b.RequestKey = "" }), "invalid_request_key"},
		{"another agency's key space", edit(func(b *api.BookingBody) { b.RequestKey = "agency:lyon:k1" }), "invalid_request_key"},
		{"no agent", edit(func(b *api.BookingBody) { b.AgentID = "" }), "missing_field"},
		{"unknown zone", edit(func(b *api.BookingBody) { b.TimeZone = "Europe/Atlantis" }), "unknown_time_zone"},
		{"nonexistent local time", edit(func(b *api.BookingBody) { b.StartsAt, b.LocalStart = "", "2027-03-28T02:30" }), "nonexistent_local_time"},
		{"ambiguous local time", edit(func(b *api.BookingBody) { b.StartsAt, b.LocalStart = "", "2027-10-31T02:30" }), "ambiguous_local_time"},
		{"past", edit(func(b *api.BookingBody) { b.StartsAt = "2020-01-01T10:00:00+01:00" }), "starts_in_past"},
		{"end before start", edit(func(b *api.BookingBody) { b.DurationMinutes, b.EndsAt = 0, b.StartsAt }), "invalid_time_range"},
		{"oversized", []byte(`{"request_key":"` + strings.Repeat("k", 5000) + `"}`), "body_too_large"},
		{"unknown resource", edit(func(b *api.BookingBody) { b.RequestKey, b.PropertyID = uuid.NewString(), "atlantis-1" }), "unknown_resource"},
	}
	for _, c := range cases {
		var e edge.Error
		require.Equal(t, http.StatusBadRequest, f.call("POST", url+"/v1/bookings", c.body, &e), c.name)
		require.Equal(t, c.code, e.Code, c.name)
		require.NotEmpty(t, e.Message, c.name)
		if strings.HasSuffix(c.code, "_local_time") {
			require.Len(t, e.Candidates, 2, c.name)
		}
	}
	require.Zero(t, f.bookings(), "no row for any bad input")

	req, err := http.NewRequest("POST", url+"/v1/bookings", strings.NewReader("{}"))
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no bearer token")
	require.NoError(t, res.Body.Close())

	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", ok, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	moved := edit(func(b *api.BookingBody) { b.StartsAt = slot(t, 17).Format(time.RFC3339) })
	var e edge.Error
	require.Equal(t, http.StatusConflict, f.call("POST", url+"/v1/bookings", moved, &e), "the key is reused for another intent")
	require.Equal(t, "request_key_reused", e.Code)
	require.Equal(t, 1, f.bookings())
}

func TestEveryToolThroughOneConversation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	call := "call-" + uuid.NewString() // one conversation for every tool
	toolIn := func(call, name string, args map[string]any) string { return f.retellTool(url, call, name, args) }
	tool := func(name string, args map[string]any) string { return toolIn(call, name, args) }
	at := func(hour int) map[string]any { return bookArgs(t, hour) }
	keyOf := func(text string) string {
		_, key, ok := strings.Cut(text, "request_key ")
		require.True(t, ok, text)
		return strings.TrimSuffix(key, ".")
	}
	key := keyOf(tool("select_slot", at(10)))
	require.True(t, strings.HasPrefix(tool("book", at(10)), "[confirmed] Confirmed"))
	status := at(10)
	status["request_key"] = key
	require.True(t, strings.HasPrefix(tool("booking_status", status), "[confirmed] Confirmed"), "book used the selected key")
	require.NotContains(t, tool("booking_status", status), "confirmed by text")
	_, err := f.pool.Exec(f.ctx, `UPDATE booking SET reconfirmed_at = now() WHERE request_key = $1`, key) // the caller's C (textstop_test.go)
	require.NoError(t, err)
	require.Contains(t, tool("booking_status", status), "The caller confirmed by text that they are coming.", "the agent's status line")

	move := at(11)
	move["request_key"] = key
	require.True(t, strings.HasPrefix(tool("reschedule_booking", move), "[confirmed] Confirmed"))
	newKey := keyOf(tool("select_slot", at(11)))
	require.NotEqual(t, key, newKey)
	require.Contains(t, tool("booking_status", status), newKey, "the old booking names its replacement")
	cancel := map[string]any{"request_key": newKey}
	require.True(t, strings.HasPrefix(tool("cancel_booking", cancel), "[cancelled] Cancelled"))
	require.True(t, strings.HasPrefix(tool("cancel_booking", cancel), "[cancelled] Cancelled"), "cancelling twice is fine")
	again := keyOf(tool("select_slot", at(11)))
	require.NotEqual(t, newKey, again, "a cancelled choice gets a fresh key when chosen again")
	require.True(t, strings.HasPrefix(tool("book", at(11)), "[confirmed] Confirmed"), "and can be booked again")
	require.Contains(t, tool("booking_status", map[string]any{}), "NOT done", "a key is required")
	require.Contains(t, tool("booking_status", map[string]any{"request_key": "no-such-key"}), "not made in this conversation")

	// Another call may not act on this conversation's bookings.
	other := "call-" + uuid.NewString()
	require.Contains(t, toolIn(other, "cancel_booking", map[string]any{"request_key": again}), "not made in this conversation")
	move["request_key"] = again
	require.Contains(t, toolIn(other, "reschedule_booking", move), "not made in this conversation")
	require.True(t, strings.HasPrefix(tool("booking_status", map[string]any{"request_key": again}), "[confirmed] Confirmed"), "the booking stands")
	require.Contains(t, tool("no_such_tool", nil), "NOT done")

	// Without a Retell key configured, the endpoint needs an agent key.
	res, err := http.Post(url+"/v1/tools/retell", "application/json", strings.NewReader(`{"name":"book"}`))
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}
