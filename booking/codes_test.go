package booking_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// codeLiteral is a code written as a string where a Code goes.
type codeLiteral struct{ where, value string }

// codeLiterals walks the module's sources (the fakes of other services,
// which speak those services' codes, and generated clients aside) for a
// Code declared outside this package and for a string literal given as a
// code: a `Code: "…"` field, a `.Code = "…"` assignment, a Code("…")
// conversion.
func codeLiterals(t *testing.T) (declared, written []codeLiteral) {
	t.Helper()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "apiclient" || name == "testdata" || name == "fakeserver" || strings.HasSuffix(name, "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		str := func(e ast.Expr) (string, bool) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return "", false
			}
			v, err := strconv.Unquote(lit.Value)
			return v, err == nil
		}
		isCode := func(e ast.Expr) bool {
			switch x := e.(type) {
			case *ast.Ident:
				return x.Name == "Code"
			case *ast.SelectorExpr:
				return x.Sel.Name == "Code"
			}
			return false
		}
		at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				if x.Type != nil && isCode(x.Type) && filepath.Base(filepath.Dir(path)) != "booking" {
					for _, v := range x.Values {
						s, _ := str(v)
						declared = append(declared, codeLiteral{at(x), s})
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" {
					if s, ok := str(x.Value); ok {
						written = append(written, codeLiteral{at(x), s})
					}
				}
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" && i < len(x.Rhs) {
						if s, ok := str(x.Rhs[i]); ok {
							written = append(written, codeLiteral{at(x), s})
						}
					}
				}
			case *ast.CallExpr:
				if isCode(x.Fun) && len(x.Args) == 1 {
					if s, ok := str(x.Args[0]); ok {
						written = append(written, codeLiteral{at(x), s})
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return declared, written
}

// Every code the service can answer is declared in this package, with
// its kind: one written as a literal elsewhere would get no kind (a 400
// answered as a 409) and no place in the OpenAPI document's enum.
func TestEveryCodeIsDeclaredHere(t *testing.T) {
	t.Parallel()
	declared, written := codeLiterals(t)
	require.Empty(t, declared, "codes declared outside booking")
	require.Empty(t, written, "codes written as literals: use the booking.Code constant")
	codes := booking.Codes()
	require.Greater(t, len(codes), 50, "the table is the real one")
	require.True(t, booking.CodeUnknownResource.Input())
	require.False(t, booking.CodeSlotTaken.Input())
	require.True(t, slices.IsSorted(codes))
}
