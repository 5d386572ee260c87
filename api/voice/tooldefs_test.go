package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// exported calls one of the definition endpoints as an integrator would.
func exported(t *testing.T, path string) map[string]any {
	t.Helper()
	es := edge.New(edge.Config{})
	es.Mount(New(nil, es.Settings(), Config{}).Routes()...)
	srv := httptest.NewServer(es.Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + path + "?base_url=https://bookings.example.test")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Contains(t, out["system_prompt"], "[confirmed]")
	return out
}

// openAPIToolArgs are the ToolArgs_<tool> schemas of the OpenAPI document.
func openAPIToolArgs(t *testing.T) map[string]any {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(edge.OpenAPI(), &doc))
	out := map[string]any{}
	for name, s := range doc.Components.Schemas {
		if tool, ok := cutPrefix(name, "ToolArgs_"); ok {
			out[tool] = s
		}
	}
	return out
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// roundTrip gives a schema as JSON decodes it, to compare with documents.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

func TestTheExportedToolsAreExactlyTheServedOnes(t *testing.T) {
	t.Parallel()
	var served []string
	s := New(nil, edge.Settings{}, Config{})
	for _, d := range toolDefs {
		served = append(served, d.name)
		// Dispatched: a call with no arguments is refused for what it
		// lacks, never as an unknown tool.
		require.NotContains(t, s.call(context.Background(), callOf("conv", ""), d.name, nil).Text(), "unknown tool", d.name)
	}
	require.Contains(t, s.call(context.Background(), callOf("conv", ""), "no_such_tool", nil).Text(), "unknown tool")

	vapi := exported(t, "/v1/tools/vapi/tools")["tools"].([]any)
	retell := exported(t, "/v1/tools/retell/functions")["general_tools"].([]any)
	documented := openAPIToolArgs(t)
	var vapiNames, retellNames []string
	for i, v := range vapi {
		fn := v.(map[string]any)["function"].(map[string]any)
		vapiNames = append(vapiNames, fn["name"].(string))
		require.Equal(t, "https://bookings.example.test/v1/tools/vapi", v.(map[string]any)["server"].(map[string]any)["url"])
		require.Equal(t, documented[fn["name"].(string)], fn["parameters"], "Vapi's %s and the OpenAPI document", fn["name"])
		rt := retell[i].(map[string]any)
		retellNames = append(retellNames, rt["name"].(string))
		require.Equal(t, fn["parameters"], rt["parameters"], "one schema for both platforms")
		// Retell retries a failed or timed-out function max_retry times
		// (0-5; retell-sdk 5.66.1): every tool is safe to repeat, so the
		// export asks for two, within the 10 s each attempt gets.
		require.Equal(t, []any{float64(2), float64(10000)}, []any{rt["max_retry"], rt["timeout_ms"]}, rt["name"])
	}
	require.Equal(t, served, vapiNames)
	require.Equal(t, served, retellNames)
	keys := make([]string, 0, len(documented))
	for k := range documented {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sorted := slices.Sorted(slices.Values(served))
	require.Equal(t, sorted, keys, "the OpenAPI document has a ToolArgs schema for each tool and no other")
	require.Equal(t, served, retellToolEnum(t), "the args-only URL names every tool, in the definition's order")
}

// retellToolEnum is the {tool} values the document gives the args-only
// Retell URL.
func retellToolEnum(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string `json:"name"`
				Schema struct {
					Enum []string `json:"enum"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(edge.OpenAPI(), &doc))
	for _, p := range doc.Paths["/v1/tools/retell/{tool}"]["post"].Parameters {
		if p.Name == "tool" {
			return p.Schema.Enum
		}
	}
	t.Fatal("no {tool} parameter")
	return nil
}

// TestWriteToolArgsIntoOpenAPI refreshes the document's ToolArgs schemas
// from the definitions when UPDATE_OPENAPI is set; otherwise it checks
// nothing is stale (the test above compares them).
func TestWriteToolArgsIntoOpenAPI(t *testing.T) {
	if os.Getenv("UPDATE_OPENAPI") == "" {
		require.Len(t, openAPIToolArgs(t), len(toolDefs))
		return
	}
	var doc map[string]any
	require.NoError(t, json.Unmarshal(edge.OpenAPI(), &doc))
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, d := range toolDefs {
		schemas["ToolArgs_"+d.name] = roundTrip(t, d.schema())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	require.NoError(t, enc.Encode(doc))
	require.NoError(t, os.WriteFile("../openapi.json", buf.Bytes(), 0o644))
}

// The prompt's rule is there in every language, with the tags and tools
// it names as they are.
func TestTheSystemPromptInEveryLanguage(t *testing.T) {
	t.Parallel()
	for _, lang := range []speech.Lang{speech.English, speech.French, speech.Chinese} {
		prompt := SystemPrompts[lang]
		for _, word := range []string{"[confirmed]", "[pending_reconciliation]", "[conflict]", "[selected]", "[not_done: …]",
			"book", "reschedule_booking", "select_slot"} {
			require.Contains(t, prompt, word, lang)
		}
	}
	s := New(nil, edge.Settings{}, Config{})
	req := httptest.NewRequest(http.MethodGet, "/v1/tools/vapi/tools?language=fr", nil)
	prompt, err := s.prompt(req)
	require.NoError(t, err)
	require.Equal(t, SystemPrompts[speech.French], prompt)
}
