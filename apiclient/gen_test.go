package apiclient

import (
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/stretchr/testify/require"
)

// The client is generated from the document as it is now: generating it
// again, here, gives the file that is kept.
func TestTheClientIsTheDocumentsOwn(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile("../internal/edge/openapi.json")
	require.NoError(t, err)
	code, err := codegen.Generate(doc, codegen.Configuration{PackageName: "apiclient",
		Generate:      codegen.GenerateOptions{Models: true, Client: true},
		OutputOptions: codegen.OutputOptions{SkipPrune: true}})
	require.NoError(t, err)
	kept, err := os.ReadFile("client.gen.go")
	require.NoError(t, err)
	require.Equal(t, body(string(kept)), body(code), "the client is stale: run go generate ./apiclient")
}

// body leaves out the header line that names the generator's version.
func body(code string) string {
	_, rest, _ := strings.Cut(code, " DO NOT EDIT.")
	return rest
}
