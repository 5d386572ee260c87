package systemtest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Every voice tool, called over MCP with lyon's key on the default
// agency's booking, reference, caller and property, answers what the
// same tool answers the default agency's own key on a booking, reference
// or property that never was, and changes nothing: lyon's caller who
// knows the reference and the phone finds nothing, and its caller ID
// matches no contact of another agency.
func TestAVoiceToolOfOneAgencyFindsNothingOfAnother(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, secret, as := f.agencyAPI(app.EdgeConfig{Tools: voice.Config{CallerIDHeader: []string{"mcp"}}})

	// The default agency's own property, which lyon's catalogue lacks,
	// and its booking with a contact.
	var e edge.Error
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/resources/paris-only",
		api.ResourceBody{Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"}, &e, as("paris")...), "%+v", e)
	const phone = "+33612345678"
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 10))
	body.Contact = &edge.Contact{Name: "Camille Martin", Phone: phone}
	var booked receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &booked, as("paris")...))
	require.Equal(t, receipt.StatusConfirmed, booked.Status)

	theirs := map[string]string{"key": key, "ref": receipt.Reference(key), "property": "paris-only", "number": phone}
	never := map[string]string{"key": uuid.NewString(), "ref": receipt.Reference(uuid.NewString()), "property": "never-a-property",
		"number": "+33698765432"}
	start := slot(t, 14)
	calls := []struct {
		tool string
		args func(of map[string]string) map[string]any
	}{
		{"booking_status", func(of map[string]string) map[string]any { return map[string]any{"reference": of["ref"]} }},
		{"booking_status", func(of map[string]string) map[string]any { return map[string]any{"request_key": of["key"]} }},
		{"find_booking", func(of map[string]string) map[string]any {
			return map[string]any{"reference": of["ref"], "phone": phone}
		}},
		{"cancel_booking", func(of map[string]string) map[string]any { return map[string]any{"request_key": of["key"]} }},
		{"reschedule_booking", func(of map[string]string) map[string]any {
			return map[string]any{"request_key": of["key"], "property_id": "paris-11", "agent_id": "agent-00", "time_zone": "Europe/Paris",
				"starts_at": start.Format("2006-01-02T15:04:05Z07:00"), "expected_policy_version": policyVersion}
		}},
		{"check_availability", func(of map[string]string) map[string]any {
			return map[string]any{"property_id": of["property"], "agent_id": "agent-00", "time_zone": "Europe/Paris",
				"date": start.Format("2006-01-02")}
		}},
		{"property_info", func(of map[string]string) map[string]any {
			return map[string]any{"property_id": of["property"], "topic": "parking"}
		}},
		{"book", func(of map[string]string) map[string]any {
			return map[string]any{"property_id": of["property"], "agent_id": "agent-00", "time_zone": "Europe/Paris",
				"starts_at": start.Format("2006-01-02T15:04:05Z07:00"), "duration_minutes": 30, "expected_policy_version": policyVersion}
		}},
	}
	for i, c := range calls {
		_, got := f.mcpCallAs(url, secret["lyon"], fmt.Sprint("lyon-call-", i), c.tool, c.args(theirs))
		_, want := f.mcpCallAs(url, secret["paris"], fmt.Sprint("paris-call-", i), c.tool, c.args(never))
		require.Equal(t, want.Status, got.Status, "%s %v", c.tool, c.args(theirs))
		require.Equal(t, want.Code, got.Code, "%s %v", c.tool, c.args(theirs))
		require.Equal(t, want.Receipt == nil, got.Receipt == nil, "%s: a receipt for one and not the other", c.tool)
		if got.Receipt != nil {
			require.NotEqual(t, key, got.Receipt.RequestKey, "%s answered lyon the default agency's receipt", c.tool)
		}
	}

	// Caller ID: lyon's call from the default agency's caller's number
	// finds what a call from a number never booked finds.
	byName := map[string]any{"name": "Camille Martin"}
	require.Equal(t, f.mcpFromNumberAs(url, secret["paris"], never["number"], "find_booking", byName),
		f.mcpFromNumberAs(url, secret["lyon"], phone, "find_booking", byName))

	var still receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key, nil, &still, as("paris")...))
	require.Equal(t, receipt.StatusConfirmed, still.Status, "lyon's calls changed the default agency's booking")
	require.Equal(t, booked.StartsAt, still.StartsAt)
	require.Equal(t, 1, f.bookings(), "the default agency holds its one booking")
}
