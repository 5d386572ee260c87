package edge

import (
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// The document validates with a maintained OpenAPI library, and every
// non-2xx answer of every route is {code, message}.
func TestTheOpenAPIDocumentValidates(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDoc)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, res := range op.Responses.Map() {
				if status[0] == '2' {
					continue
				}
				media := res.Value.Content.Get("application/json")
				require.NotNil(t, media, "%s %s %s answers JSON", method, path, status)
				if path == "/readyz" {
					continue // its 503 is the checks that failed
				}
				require.Equal(t, "#/components/schemas/Error", media.Schema.Ref, "%s %s %s", method, path, status)
			}
		}
	}
}

// docs/agent-api.md lists every route of the document, each by its
// method and whole path.
func TestTheAgentAPIPageNamesEveryRoute(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../docs/agent-api.md")
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDoc)
	require.NoError(t, err)
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			named := regexp.MustCompile("`" + method + "(` and `[A-Z]+)? " + regexp.QuoteMeta(path) + "[`?]" +
				"|`[A-Z]+` and `" + method + " " + regexp.QuoteMeta(path) + "[`?]")
			require.Regexp(t, named, string(page), "%s %s", method, path)
		}
	}
}
