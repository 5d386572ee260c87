package workflows

import (
	"encoding/base64"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// TestReplayKeptHistories replays every history kept in testdata/<build>,
// recorded from real runs of each released build (app/systemtest's record).
// Sagas stay open until the viewing, for weeks, so a worker of this build
// will resume sagas any earlier build started: a change that makes the saga
// take other decisions for the same history fails here, and goes behind
// workflow.GetVersion, instead of failing those sagas in production.
func TestReplayKeptHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	require.NoError(t, err)
	first, err := filepath.Glob(filepath.Join("testdata", "v0.1.0", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(first), 6, "the first release's histories are missing")
	require.ElementsMatch(t, registeredTypes(), keptTypes(t, files), "every workflow type has a kept history")
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			for _, w := range All() {
				r.RegisterWorkflow(w)
			}
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, file))
		})
	}
}

// registeredTypes is the names a worker registers All under: each
// function's own.
func registeredTypes() []string {
	var names []string
	for _, w := range All() {
		full := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
		names = append(names, full[strings.LastIndex(full, ".")+1:])
	}
	return names
}

// keptTypes is the workflow types the kept histories start, each once.
func keptTypes(t *testing.T, files []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var h struct {
			Events []struct {
				Started *struct {
					WorkflowType struct{ Name string } `json:"workflowType"`
				} `json:"workflowExecutionStartedEventAttributes"`
			} `json:"events"`
		}
		require.NoError(t, json.Unmarshal(data, &h), file)
		require.NotNil(t, h.Events[0].Started, file)
		seen[h.Events[0].Started.WorkflowType.Name] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// The kept Reconcile run went through its booking-retention guard, so a
// change there is held to it too.
func TestAKeptReconcileRunPassedItsVersionGuard(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "v0.2.0", "reconcile_holds_contacts_retention.json"))
	require.NoError(t, err)
	// The marker's change id is a JSON payload, base64 in the history.
	id := base64.StdEncoding.EncodeToString([]byte(`"` + changeRetention + `"`))
	require.True(t, strings.Contains(string(data), `"markerName": "Version"`) && strings.Contains(string(data), id),
		"no %s version marker in the kept run", changeRetention)
}

// Every change to the workflows since v0.2.0 has a history kept from the
// build before it (testdata/before-<change id>), so the replay above
// holds the change's guard to the sagas that build started. The changes
// are read from versions.go, where each names the release it came in.
func TestEveryChangeSinceV020HasAHistoryFromBeforeIt(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "versions.go", nil, parser.ParseComments)
	require.NoError(t, err)
	release := regexp.MustCompile(`\(v0\.(\d+)\.\d+\)`)
	var checked int
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			m := release.FindStringSubmatch(vs.Doc.Text())
			require.NotNil(t, m, "%s names no release in its comment", vs.Names[0].Name)
			if minor, _ := strconv.Atoi(m[1]); minor <= 2 {
				continue // v0.1.0 and v0.2.0 keep histories of their own
			}
			id, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			require.NoError(t, err)
			kept, err := filepath.Glob(filepath.Join("testdata", "before-"+id, "*.json"))
			require.NoError(t, err)
			require.NotEmpty(t, kept, "change %q has no history kept from the build before it (testdata/before-%s)", id, id)
			checked++
		}
	}
	require.GreaterOrEqual(t, checked, 3, "the changes since v0.2.0 were found")
}
