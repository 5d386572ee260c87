package systemtest

import (
	"context"
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/staff"
	"github.com/bookingsaga/bookingsaga/api/voice"
)

// Every field the OpenAPI document gives a request body is one its route
// takes: each request schema, every property filled (from its example or
// enum, nested objects too), is sent to its route on a served edge, and
// no answer may say the field is unknown. A field documented and refused
// (a property's "crm" was) is a user who can't do what the document says.
func TestEveryDocumentedRequestFieldIsTaken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	doc, err := openapi3.NewLoader().LoadFromData(edge.OpenAPI())
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	sent := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			for route, schema := range bodies(path, op.RequestBody.Value.Content.Get("application/json").Schema) {
				body, err := json.Marshal(filled(schema.Value))
				require.NoError(t, err)
				header := []string{}
				if strings.HasPrefix(route, "/v1/tools/retell/") {
					header = append(header, "X-Retell-Signature", retellSign(body, "retell-key"), "X-Call-Id", "call-"+uuid.NewString())
				}
				var answer json.RawMessage
				f.call(method, url+route, body, &answer, header...)
				require.NotContains(t, string(answer), "unknown field", "%s %s with %s", method, route, body)
				sent++
			}
		}
	}
	require.Greater(t, sent, 15, "the request schemas were walked")
}

// bodies are the routes a request schema is sent to, path parameters
// filled: one per ToolArgs_<tool> of an anyOf, the path's own otherwise.
// A schema with no properties of its own (a JSON-RPC envelope, a
// platform's message) documents no field to send.
func bodies(path string, s *openapi3.SchemaRef) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	route := strings.NewReplacer("{request_key}", uuid.NewString(), "{id}", "res-"+uuid.NewString()[:8]).Replace(path)
	for _, alt := range s.Value.AnyOf {
		tool := strings.TrimPrefix(alt.Ref, "#/components/schemas/ToolArgs_")
		out[strings.Replace(path, "{tool}", tool, 1)] = alt
	}
	if len(properties(s.Value)) > 0 {
		out[route] = s
	}
	return out
}

// filled is a value for schema with every property a request may send
// set (all but readOnly ones): its example, else its first enum value,
// else one of its type.
func filled(s *openapi3.Schema) any {
	switch {
	case s.Example != nil:
		return s.Example
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.OneOf) > 0:
		return filled(s.OneOf[0].Value)
	}
	switch {
	case s.Type.Is("object") || len(properties(s)) > 0:
		out := map[string]any{}
		props := properties(s)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if !props[name].Value.ReadOnly { // an answer's field, not the request's
				out[name] = filled(props[name].Value)
			}
		}
		return out
	case s.Type.Is("array"):
		if s.Items == nil {
			return []any{}
		}
		return []any{filled(s.Items.Value)}
	case s.Type.Is("integer"), s.Type.Is("number"):
		return 1
	case s.Type.Is("boolean"):
		return true
	}
	return "x"
}

// And every field a route takes is in the document: each body type's
// JSON fields, embedded structs' included, are its schema's properties.
func TestEveryRequestFieldIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(edge.OpenAPI())
	require.NoError(t, err)
	for schema, body := range map[string]any{"Booking": api.BookingBody{}, "Intent": api.IntentBody{}, "Reschedule": edge.RescheduleBody{},
		"Resource": api.ResourceBody{}, "Policy": api.PolicyBody{}, "Pool": api.PoolBody{}, "Webhook": api.WebhookBody{},
		"Outcome": staff.OutcomeBody{}, "Reassign": staff.ReassignBody{}} {
		props := properties(doc.Components.Schemas[schema].Value)
		require.NotEmpty(t, props, schema)
		for _, field := range jsonFields(reflect.TypeOf(body)) {
			require.Contains(t, props, field, "%s takes %q; the document's %s schema lacks it", reflect.TypeOf(body), field, schema)
		}
	}
}

// properties are s's own properties and those of the schemas it is allOf.
func properties(s *openapi3.Schema) openapi3.Schemas {
	out := maps.Clone(s.Properties)
	if out == nil {
		out = openapi3.Schemas{}
	}
	for _, part := range s.AllOf {
		maps.Copy(out, properties(part.Value))
	}
	return out
}

// jsonFields are the JSON names of t's fields, embedded structs' too.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			out = append(out, jsonFields(f.Type)...)
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}
