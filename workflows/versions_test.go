package workflows

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnUnguardedChangeFailsTheKeptHistories shows why changeFinalRead is
// behind workflow.GetVersion: the same change with its guard taken out
// (the file swapped in through go's -overlay) makes the saga take another
// decision in a history v0.1.0 recorded, and the replay fails.
func TestAnUnguardedChangeFailsTheKeptHistories(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("booking.go")
	require.NoError(t, err)
	guard := "s.since(ctx, changeFinalRead)"
	require.Contains(t, string(src), guard)
	dir := t.TempDir()
	unguarded := filepath.Join(dir, "booking.go")
	require.NoError(t, os.WriteFile(unguarded, []byte(strings.Replace(string(src), guard, "true", 1)), 0o644))
	abs, err := filepath.Abs("booking.go")
	require.NoError(t, err)
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{abs: unguarded}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644))

	cmd := exec.Command("go", "test", "-count=1", "-overlay", filepath.Join(dir, "overlay.json"),
		"-run", "TestReplayKeptHistories/v0.1.0/viewing_ended", ".")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the replay passed without the guard: %s", out)
	require.Contains(t, string(out), "nondeterministic", "the replay failed for another reason: %s", out)
}

// The one marker stands only for changes made before it: a saga that
// recorded it started on a build that had them, and on no later one. A
// change added after it and listed in oneMarkerStandsFor would skip its
// guard in sagas started before that change.
func TestOneMarkerStandsOnlyForChangesBeforeIt(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "versions.go", nil, 0)
	require.NoError(t, err)
	var order []string // change ids, as declared
	for _, decl := range f.Decls {
		if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.CONST {
			for _, spec := range gen.Specs {
				id, err := strconv.Unquote(spec.(*ast.ValueSpec).Values[0].(*ast.BasicLit).Value)
				require.NoError(t, err)
				order = append(order, id)
			}
		}
	}
	marker := slices.Index(order, changeOneMarker)
	require.Positive(t, marker)
	for _, id := range oneMarkerStandsFor {
		at := slices.Index(order, id)
		require.True(t, at >= 0 && at < marker, "%q is not a change declared before %q", id, changeOneMarker)
	}
}
