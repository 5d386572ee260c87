package activities_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/activities"
)

// TestActivityNamesAreTheMethods: workflows call the activities by the
// names in booking/activity.go, and the worker registers them by method
// name. Each name must be a method, and each method must have a name.
func TestActivityNamesAreTheMethods(t *testing.T) {
	t.Parallel()
	file, err := parser.ParseFile(token.NewFileSet(), "../booking/activity.go", nil, 0)
	require.NoError(t, err)
	named := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || !strings.HasPrefix(spec.Names[0].Name, "Activity") || len(spec.Values) != 1 {
			return true
		}
		lit, ok := spec.Values[0].(*ast.BasicLit)
		require.True(t, ok, spec.Names[0].Name)
		v, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		require.Equal(t, "Activity"+v, spec.Names[0].Name, "the constant is named for its method")
		named[v] = true
		return true
	})
	methods := map[string]bool{}
	typ := reflect.TypeOf(&activities.Activities{})
	for i := range typ.NumMethod() {
		methods[typ.Method(i).Name] = true
	}
	require.Equal(t, methods, named)
}
