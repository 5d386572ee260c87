package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// codesInSource are the values of every Code constant declared in the
// booking and api packages: each refusal and error code the API can give.
func codesInSource(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"../booking", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				spec, ok := n.(*ast.ValueSpec)
				if !ok || spec.Type == nil || len(spec.Values) != 1 {
					return true
				}
				typ := ""
				switch ty := spec.Type.(type) {
				case *ast.Ident:
					typ = ty.Name
				case *ast.SelectorExpr:
					typ = ty.Sel.Name
				}
				if lit, ok := spec.Values[0].(*ast.BasicLit); ok && typ == "Code" && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out = append(out, v)
				}
				return true
			})
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The document lists every code as an enum, for generated clients to
// switch on, and no code that the source does not have.
func TestEveryCodeIsAnEnumValue(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc, &doc))
	enum := slices.Sorted(slices.Values(doc.Components.Schemas.Error.Properties.Code.Enum))
	require.Equal(t, codesInSource(t), enum)
}
