package systemtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// An agency's voice platforms sign with its own secrets, which its admin
// sets and never reads back: its Retell and Vapi URLs take calls signed
// with them alone, and book in the agency; a call signed with the
// deployment's secret, or another agency's, is refused; the deployment's
// URLs refuse the agency's signature; a secret removed refuses again.
func TestAnAgencysPlatformsSignWithItsOwnSecrets(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, _, as := f.agencyAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key", VapiSecret: "vapi-secret"}})
	const lyonRetell, lyonVapi = "lyon-retell-key-0123456789", "lyon-vapi-secret-0123456789"
	retellURL, vapiURL := url+"/v1/agencies/lyon/tools/retell", url+"/v1/agencies/lyon/tools/vapi"

	body, err := json.Marshal(map[string]any{"name": "book", "call": map[string]string{"call_id": "call-" + uuid.NewString()},
		"args": bookArgs(t, 15)})
	require.NoError(t, err)
	var e edge.Error
	require.Equal(t, http.StatusUnauthorized, f.call("POST", retellURL, body, &e, "X-Retell-Signature", retellSign(body, lyonRetell)),
		"lyon set no Retell key yet")

	var set api.PlatformSecretList
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/voice/secrets/retell", api.PlatformSecretBody{Secret: lyonRetell}, &set, as("lyon")...))
	require.Equal(t, []string{"retell"}, set.Set, "which are set, never what")
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/voice/secrets/vapi", api.PlatformSecretBody{Secret: lyonVapi}, &set, as("lyon")...))
	require.Equal(t, http.StatusNotFound, f.call("PUT", url+"/v1/voice/secrets/zoom", api.PlatformSecretBody{Secret: lyonVapi}, &e, as("lyon")...))
	require.Equal(t, http.StatusBadRequest, f.call("PUT", url+"/v1/voice/secrets/retell", api.PlatformSecretBody{Secret: "short"}, &e, as("lyon")...))
	require.Equal(t, "invalid_request", e.Code)
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/voice/secrets", nil, &set, as("paris")...))
	require.Empty(t, set.Set, "the default agency sees none of lyon's")

	for _, wrong := range []string{"retell-key", "another-agencys-retell-key"} {
		require.Equal(t, http.StatusUnauthorized, f.call("POST", retellURL, body, &e, "X-Retell-Signature", retellSign(body, wrong)), wrong)
	}
	require.Equal(t, http.StatusUnauthorized, f.call("POST", url+"/v1/tools/retell", body, &e, "X-Retell-Signature", retellSign(body, lyonRetell)),
		"the deployment's URL takes the deployment's signature")
	var out struct {
		Result string `json:"result"`
	}
	require.Equal(t, http.StatusOK, f.call("POST", retellURL, body, &out, "X-Retell-Signature", retellSign(body, lyonRetell)))
	require.True(t, strings.HasPrefix(out.Result, "[confirmed] "), out.Result)
	ref := spokenReference.FindString(out.Result)
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings?reference="+ref, nil, &r, as("lyon")...), "lyon's booking")
	require.Equal(t, http.StatusNotFound, f.call("GET", url+"/v1/bookings?reference="+ref, nil, &e, as("paris")...))

	vapi := map[string]any{"message": map[string]any{"type": "tool-calls", "call": map[string]string{"id": "call-" + uuid.NewString()},
		"toolCalls": []map[string]any{{"id": "tc-1", "type": "function", "function": map[string]any{"name": "check_availability",
			"arguments": map[string]string{"property_id": "paris-11", "agent_id": "agent-00", "time_zone": "Europe/Paris",
				"date": slot(t, 15).Format("2006-01-02")}}}}}}
	require.Equal(t, http.StatusUnauthorized, f.call("POST", vapiURL, vapi, &e, "X-Vapi-Secret", "vapi-secret"))
	var results vapiAnswer
	require.Equal(t, http.StatusOK, f.call("POST", vapiURL, vapi, &results, "X-Vapi-Secret", lyonVapi))
	require.Len(t, results.Results, 1)
	require.Contains(t, results.Results[0].Result, "Free:", "lyon's catalogue answered")
	require.NotContains(t, results.Results[0].Result, "15:00", "lyon's booking taken from lyon's offer")

	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/voice/secrets/retell", nil, &set, as("lyon")...))
	require.Equal(t, []string{"vapi"}, set.Set)
	require.Equal(t, http.StatusUnauthorized, f.call("POST", retellURL, body, &e, "X-Retell-Signature", retellSign(body, lyonRetell)),
		"a removed secret signs nothing")
	require.Equal(t, http.StatusUnauthorized, f.call("POST", url+"/v1/agencies/nantes/tools/vapi", vapi, &e, "X-Vapi-Secret", lyonVapi),
		"an agency the deployment lacks")
}
