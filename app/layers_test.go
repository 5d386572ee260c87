package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/bookingsaga/bookingsaga/"

// pkg is one of the module's packages as `go list` sees it, tests aside.
type pkg struct {
	dir                        string
	imports, deps, testImports []string
}

// packages lists the module's packages with what they import and link.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	pkgs := map[string]pkg{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Split(strings.TrimSpace(line), "|")
		require.Len(t, f, 5, line)
		pkgs[strings.TrimPrefix(f[0], module)] = pkg{dir: f[1], imports: strings.Split(f[2], ","), deps: strings.Split(f[3], ","),
			testImports: strings.Split(f[4], ",")}
	}
	require.Contains(t, pkgs, "internal/store", "the list is the real one")
	return pkgs
}

// The floors of the house, one folder each: internal/ is the ground
// (adapters, the store, the desk), the top-level packages the vocabulary,
// the workflows, the public client and the edge over it, and app/ the
// roof: the wiring and what only it and the tests use (the dev stack, the
// fault suite, the system tests). No arrow runs back up: the ground
// imports neither the edge nor the roof, and only the commands open the
// roof.
func TestLayersHoldTheirFloors(t *testing.T) {
	t.Parallel()
	pkgs := packages(t)
	commands := []string{"starter", "worker", "chaos", "deploy"}
	roof := func(name string) bool { return name == "app" || strings.HasPrefix(name, "app/") }
	upper := func(name string) bool {
		return roof(name) || slices.Contains(commands, name) || name == "api" || strings.HasPrefix(name, "api/")
	}
	for name, p := range pkgs {
		for _, imp := range p.imports {
			up := strings.TrimPrefix(imp, module)
			if strings.HasPrefix(name, "internal/") {
				require.False(t, upper(up), "%s imports %s: the ground reaches up", name, imp)
			}
			if roof(up) && !roof(name) {
				require.Contains(t, commands, name, "%s imports %s: only the commands open the roof", name, imp)
			}
		}
	}
	links := func(name string, banned ...string) {
		t.Helper()
		require.Contains(t, pkgs, name)
		for _, dep := range pkgs[name].deps {
			for _, b := range banned {
				require.False(t, strings.HasPrefix(dep, b), "%s links %s", name, dep)
			}
		}
	}
	// The API and the client an agent backend imports talk to Temporal
	// and take the store's reads as interfaces the wiring fills.
	// The edge links no Temporal package at all: it holds the desk as
	// ports (api.Sagas, voice.Sagas, staff.Sagas), and the saga client
	// under it translates Temporal's errors at its one boundary.
	edgeBans := []string{module + "internal/store", module + "activities", "github.com/jackc/pgx", module + "sagaclient", module + "internal/desk", "go.temporal.io/"}
	routes := []string{"api", "api/voice", "api/staff", "api/texts", "api/callerpage"}
	for _, name := range append([]string{"internal/edge"}, routes...) {
		links(name, edgeBans...)
	}
	// The toolkit is apart from the routes: each package of routes
	// imports the toolkit and none of its siblings, in code or tests.
	for _, name := range routes {
		for _, imp := range append(pkgs[name].imports, pkgs[name].testImports...) {
			in := strings.TrimPrefix(imp, module)
			require.False(t, in != name && slices.Contains(routes, in), "%s imports its sibling %s", name, in)
		}
		require.Contains(t, pkgs[name].imports, module+"internal/edge", "%s is mounted through the toolkit", name)
	}
	// The shared vocabulary links no Temporal SDK either.
	links("booking", "go.temporal.io/")
	links("receipt", "go.temporal.io/")
	links("agency", "go.temporal.io/")
	// The public client needs a Temporal client and nothing of the store:
	// the desk checks answers against it, inside the module.
	links("sagaclient", module+"internal/store", module+"internal/catalog", module+"internal/desk", module+"activities",
		module+"internal/gcal", "github.com/jackc/pgx", "google.golang.org/api")
	// It reaches under internal/ for the search attributes' names alone;
	// inside the module, only the wiring and the desk hold it, and only
	// the wiring, the fault suite and the CLI hold the desk.
	for _, imp := range pkgs["sagaclient"].imports {
		in := strings.TrimPrefix(imp, module)
		require.False(t, strings.HasPrefix(in, "internal/") && in != "internal/visibility", "sagaclient imports %s", imp)
	}
	for name, p := range pkgs {
		if slices.Contains(p.imports, module+"sagaclient") {
			require.Contains(t, []string{"app", "internal/desk"}, name, "%s imports sagaclient", name)
		}
		if slices.Contains(p.imports, module+"internal/desk") {
			require.Contains(t, []string{"app", "app/chaos", "starter"}, name, "%s imports the desk", name)
		}
	}
	// Workflows are deterministic code: no client, no I/O adapters.
	links("workflows", "go.temporal.io/sdk/client", "github.com/jackc/pgx", "google.golang.org/api", module+"internal/store")
	// The activities speak the calendar mirror in the project's own terms.
	links("activities", "google.golang.org/api/calendar", module+"internal/gcal", module+"internal/msgraph")
}

// Only the wiring constructs the adapters of the outside systems; every
// other package receives them as the interfaces it owns.
func TestOnlyTheWiringConstructsAdapters(t *testing.T) {
	t.Parallel()
	constructors := map[string][]string{module + "internal/gcal": {"New"}, module + "internal/msgraph": {"New"},
		module + "internal/crm": {"NewHTTP"}, module + "internal/calendars": {"NewRouter"}}
	found := 0
	for name, p := range packages(t) {
		files, err := filepath.Glob(filepath.Join(p.dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, call := range adapterCalls(t, file, constructors) {
				if name == "app" {
					found++
					continue
				}
				t.Errorf("%s constructs an adapter (%s): only app may", file, call)
			}
		}
	}
	require.Equal(t, 4, found, "the wiring's own calls are found, so the scan is real")
}

// adapterCalls lists the calls in file of constructors, by package path.
func adapterCalls(t *testing.T, file string, constructors map[string][]string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	local := map[string]string{} // the name a file gives an import
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = path
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && slices.Contains(constructors[local[id.Name]], sel.Sel.Name) {
			calls = append(calls, id.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return calls
}

// The composition root holds the wiring, not the system tests: its own
// tests start no Temporal server (those are app/systemtest's).
func TestTheWiringStartsNoServer(t *testing.T) {
	t.Parallel()
	tests, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	require.Contains(t, tests, "layers_test.go", "the scan is of this folder")
	for _, file := range tests {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			require.NotContains(t, imp.Path.Value, "go.temporal.io/server", "%s starts a Temporal server: a system test, for app/systemtest", file)
		}
	}
}
