package systemtest

import (
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// vapiPhoneCall is vapiToolCalls from an inbound phone call: Vapi's Call
// with type inboundPhoneCall and its customer (CreateCustomerDto, number
// in E.164), and the message's own copy of the customer, as Vapi's
// server SDK (server-sdk-typescript 2.0.0, ServerMessageToolCalls) types them.
func vapiPhoneCall(callID, number, tool string, args map[string]any) []byte {
	var msg map[string]map[string]any
	_ = json.Unmarshal(vapiToolCalls(callID, "tc-"+uuid.NewString(), tool, args), &msg)
	msg["message"]["call"] = map[string]any{"id": callID, "orgId": "org-uuid", "type": "inboundPhoneCall",
		"customer": map[string]any{"number": number}, "phoneNumberId": "pn-uuid"}
	msg["message"]["customer"] = map[string]any{"number": number}
	body, _ := json.Marshal(msg)
	return body
}

// vapiLine posts a Vapi message and returns its one result or error.
func (f *fixture) vapiLine(url string, body []byte) string {
	f.t.Helper()
	var out vapiAnswer
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/tools/vapi", body, &out, "X-Vapi-Secret", "vapi-secret"))
	require.Len(f.t, out.Results, 1)
	return out.Results[0].Result + out.Results[0].Error
}

// retellPhoneTool calls a tool through Retell's function webhook from a
// phone call (PhoneCallResponse: direction, from_number, to_number).
func (f *fixture) retellPhoneTool(url, direction, from, to, tool string, args map[string]any) string {
	f.t.Helper()
	body, err := json.Marshal(map[string]any{"name": tool, "args": args, "call": map[string]any{"call_id": "call-" + uuid.NewString(),
		"call_type": "phone_call", "direction": direction, "from_number": from, "to_number": to, "agent_id": "agent-retell"}})
	require.NoError(f.t, err)
	var out struct {
		Result string `json:"result"`
	}
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/tools/retell", body, &out, "X-Retell-Signature", retellSign(body, "retell-key")))
	return out.Result
}

// mcpFromNumber calls a tool over MCP with caller ID in X-Caller-Number,
// as an integrator's code sets it (LiveKit's sip.phoneNumber, say).
func (f *fixture) mcpFromNumber(url, number, tool string, args map[string]any) string {
	f.t.Helper()
	return f.mcpFromNumberAs(url, apiKey, number, tool, args)
}

// mcpFromNumberAs is mcpFromNumber under another API key.
func (f *fixture) mcpFromNumberAs(url, key, number, tool string, args map[string]any) string {
	f.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "integrator", Version: "1"}, nil)
	header := map[string]string{"Authorization": "Bearer " + key, "X-Call-Id": "sip-" + uuid.NewString(), voice.CallerNumberHeader: number}
	sess, err := c.Connect(f.ctx, &mcp.StreamableClientTransport{Endpoint: url + "/v1/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: withHeaders{base: http.DefaultTransport, header: header}}}, nil)
	require.NoError(f.t, err)
	defer sess.Close()
	res, err := sess.CallTool(f.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(f.t, err)
	return res.Content[0].(*mcp.TextContent).Text
}

// bookedBy serves the edge as a deployment fronted by the platforms does
// (Retell and Vapi verified, MCP behind a gateway that sets
// X-Caller-Number itself) and books the slot at hour over Retell with the
// caller's name and phone, answering the edge and the reference.
func (f *fixture) bookedBy(t *testing.T, hour int, name, phone string) (url, ref string) {
	t.Helper()
	url = f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key", VapiSecret: "vapi-secret", CallerIDHeader: []string{"mcp"}}})
	args := bookArgs(t, hour)
	args["contact"] = map[string]string{"name": name, "phone": phone}
	booked := f.retellTool(url, "call-"+uuid.NewString(), "book", args)
	require.True(t, strings.HasPrefix(booked, "[confirmed]"), booked)
	return url, spokenReference.FindString(booked)
}

// A caller who booked under "06 12 34 56 78" rings again without their
// reference: the number the platform says they call from, with their
// full name, finds the booking over Vapi, Retell and MCP alike, and the
// answer names its time and property alone: caller ID finds, it does not
// unlock (DH1). A number the model passes is not caller ID; another
// country's number with the same digits is not theirs; and a number's
// attempts are counted for every call.
func TestAReturningCallerIsFoundByCallerIDAndName(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, ref := f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")
	caller := "+33612345678"
	foundLine := "[found] Found under the number the caller is calling from: a viewing of the property on "

	// Vapi: message.call.customer.number.
	found := f.vapiLine(url, vapiPhoneCall("vapi-"+uuid.NewString(), caller, "find_booking", map[string]any{"name": "marie DUPONT"}))
	require.True(t, strings.HasPrefix(found, foundLine), found)
	require.NotContains(t, found, ref, "no reference: caller ID is no proof")
	require.NotContains(t, found, "request_key")
	require.NotContains(t, found, "12 34", "the number is never read back")

	// Retell: call.from_number on an inbound call, to_number on an outbound one.
	in := f.retellPhoneTool(url, "inbound", caller, "+33100000000", "find_booking", map[string]any{"name": "Dupont Marie"})
	require.True(t, strings.HasPrefix(in, foundLine), in)
	out := f.retellPhoneTool(url, "outbound", "+33100000000", caller, "find_booking", map[string]any{"name": "Marie Dupont"})
	require.True(t, strings.HasPrefix(out, foundLine), out)

	// MCP: X-Caller-Number, set by the platform in front, written as it gives it.
	require.True(t, strings.HasPrefix(f.mcpFromNumber(url, "+33 6 12 34 56 78", "find_booking", map[string]any{"name": "Marie Dupont"}), foundLine))

	// Another name on the same line finds nothing; so does another
	// country's number with the same digits.
	other := f.vapiLine(url, vapiPhoneCall("vapi-"+uuid.NewString(), caller, "find_booking", map[string]any{"name": "Jean Martin"}))
	require.Equal(t, "[not_done: not_found] NOT done: no upcoming booking matches the number this call comes from and that name; ask for the reference, or offer a person.", other)
	abroad := f.vapiLine(url, vapiPhoneCall("vapi-"+uuid.NewString(), "+44612345678", "find_booking", map[string]any{"name": "Marie Dupont"}))
	require.Equal(t, other, abroad)

	// A web call has no caller ID; the number the model passes is not one.
	web := f.vapiLine(url, vapiToolCalls("vapi-"+uuid.NewString(), "tc-1", "find_booking", map[string]any{"name": "Marie Dupont", "phone": caller}))
	require.True(t, strings.HasPrefix(web, "[not_done: missing_field] NOT done: this call carries no caller ID"), web)

	// Five attempts on the number were made (Vapi, Retell twice, MCP,
	// the wrong name): a sixth, from a new call, is refused even with
	// the right name.
	limited := f.vapiLine(url, vapiPhoneCall("vapi-"+uuid.NewString(), caller, "find_booking", map[string]any{"name": "Marie Dupont"}))
	require.True(t, strings.HasPrefix(limited, "[not_done: rate_limited]"), limited)
}

// A stranger rings from the caller's number (caller ID spoofed) knowing
// her first name, then her full name: the first finds nothing, the second
// only that a viewing exists and when; cancelling it is refused. The
// caller herself, quoting her reference with the phone she booked with,
// may cancel it (DH1).
func TestCallerIDAloneNeverUnlocksABooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, ref := f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")
	var key string
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT request_key FROM booking").Scan(&key))
	call := "vapi-" + uuid.NewString()
	tool := func(name string, args map[string]any) string {
		return f.vapiLine(url, vapiPhoneCall(call, "+33612345678", name, args))
	}
	first := tool("find_booking", map[string]any{"name": "Marie"})
	require.True(t, strings.HasPrefix(first, "[not_done: not_found]"), "a first name is not the caller: %s", first)
	full := tool("find_booking", map[string]any{"name": "Marie Dupont"})
	require.True(t, strings.HasPrefix(full, "[found]"), full)
	cancel := tool("cancel_booking", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(cancel, "[not_done: not_this_conversation]"), cancel)
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, key).Status, "still booked")

	found := tool("find_booking", map[string]any{"reference": ref, "phone": "06 12 34 56 78"})
	require.True(t, strings.HasPrefix(found, "[confirmed]"), found)
	cancelled := tool("cancel_booking", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(cancelled, "[cancelled]"), cancelled)
}

// Caller ID comes only from where the platform puts it in what it signs:
// a header on a deployment that declared no platform in front of that
// route, and a call object in the model's own arguments (Retell's args
// only), are not caller ID (DM3).
func TestCallerIDOnlyFromThePlatform(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")
	plain := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	noCallerID := "[not_done: missing_field] NOT done: this call carries no caller ID"

	header := f.mcpFromNumber(plain, "+33612345678", "find_booking", map[string]any{"name": "Marie Dupont"})
	require.True(t, strings.HasPrefix(header, noCallerID), "an agent key's header: %s", header)

	// The model's arguments shaped as Retell's full body: a call object
	// and the arguments under "args".
	args, err := json.Marshal(map[string]any{"args": map[string]any{"name": "Marie Dupont"},
		"call": map[string]any{"call_id": "forged", "direction": "inbound", "from_number": "+33612345678"}})
	require.NoError(t, err)
	var out struct {
		Result string `json:"result"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", plain+"/v1/tools/retell/find_booking", args, &out,
		"X-Retell-Signature", retellSign(args, "retell-key"), "X-Call-Id", "call-"+uuid.NewString()))
	require.True(t, strings.HasPrefix(out.Result, noCallerID), "a call object in the arguments: %s", out.Result)
}

// Erasing the contact erases what caller ID finds it by.
func TestCallerIDFindsNothingOnceTheContactIsErased(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, ref := f.bookedBy(t, 12, "Ada Lovelace", "+33 6 98 76 54 32")
	found := f.mcpFromNumber(url, "+33698765432", "find_booking", map[string]any{"reference": ref, "phone": "+33698765432"})
	require.True(t, strings.HasPrefix(found, "[confirmed]"), found)
	require.True(t, strings.HasPrefix(f.mcpFromNumber(url, "+33698765432", "find_booking", map[string]any{"name": "Ada Lovelace"}), "[found]"))

	var digests int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM vault.contact_key WHERE phone_digest IS NOT NULL`).Scan(&digests))
	require.Positive(t, digests)
	key := toolKey.FindStringSubmatch(found)[1]
	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/bookings/"+key+"/contact", nil, nil))
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM vault.contact_key WHERE request_key = $1 AND phone_digest IS NOT NULL`, key).Scan(&digests))
	require.Zero(t, digests, "the digest went with the data key")
	gone := f.mcpFromNumber(url, "+33698765432", "find_booking", map[string]any{"name": "Ada Lovelace"})
	require.True(t, strings.HasPrefix(gone, "[not_done: not_found]"), gone)
}
