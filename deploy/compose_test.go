package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
)

// setup loads ../docker-compose.yml as `docker compose` would, with the
// required API_TOKEN set.
func setup(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	file := filepath.Join(root, "docker-compose.yml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}},
		Environment: types.Mapping{"API_TOKEN": "test-token"},
	}, func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
	require.NoError(t, err)
	return p
}

func TestComposeHasEveryService(t *testing.T) {
	t.Parallel()
	p := setup(t)
	require.ElementsMatch(t, []string{"postgresql", "temporal-schema", "temporal", "temporal-setup", "temporal-ui", "worker", "api"},
		p.ServiceNames())
	images := map[string]string{"postgresql": "postgres:", "temporal-schema": "temporalio/admin-tools:",
		"temporal": "temporalio/server:", "temporal-setup": "temporalio/admin-tools:", "temporal-ui": "temporalio/ui:"}
	for name, prefix := range images {
		require.True(t, strings.HasPrefix(p.Services[name].Image, prefix), "%s runs %s", name, p.Services[name].Image)
		require.NotContains(t, p.Services[name].Image, ":latest", "%s pins its version", name)
	}
	require.NotNil(t, p.Services["worker"].Build, "the worker is built from the Dockerfile")
	require.Equal(t, p.Services["worker"].Image, p.Services["api"].Image, "the API runs the same image")
	_, err := os.Stat(filepath.Join(p.Services["worker"].Build.Context, p.Services["worker"].Build.Dockerfile))
	require.NoError(t, err)
}

func TestComposePortsAndHealthChecks(t *testing.T) {
	t.Parallel()
	p := setup(t)
	published := map[string]string{}
	for name, s := range p.Services {
		for _, port := range s.Ports {
			published[name] = port.Published + ":" + strconv.FormatUint(uint64(port.Target), 10)
		}
	}
	require.Equal(t, map[string]string{"temporal": "7233:7233", "temporal-ui": "8233:8080", "api": "8080:8080"}, published)
	for _, name := range []string{"postgresql", "temporal", "worker", "api"} {
		hc := p.Services[name].HealthCheck
		require.NotNil(t, hc, "%s has a health check", name)
		require.NotEmpty(t, hc.Test, name)
		require.False(t, hc.Disable, name)
	}
	require.Contains(t, p.Services["api"].HealthCheck.Test, "http://127.0.0.1:8080/readyz",
		"the API is healthy when Temporal answers, not merely when it runs")
}

func TestComposeStartsInDependencyOrder(t *testing.T) {
	t.Parallel()
	p := setup(t)
	want := map[string]map[string]string{
		"temporal-schema": {"postgresql": types.ServiceConditionHealthy},
		"temporal":        {"temporal-schema": types.ServiceConditionCompletedSuccessfully},
		"temporal-setup":  {"temporal": types.ServiceConditionHealthy},
		"temporal-ui":     {"temporal": types.ServiceConditionHealthy},
		"worker":          {"postgresql": types.ServiceConditionHealthy, "temporal-setup": types.ServiceConditionCompletedSuccessfully},
		"api":             {"worker": types.ServiceConditionHealthy},
	}
	for name, deps := range want {
		got := map[string]string{}
		for dep, cfg := range p.Services[name].DependsOn {
			got[dep] = cfg.Condition
		}
		require.Equal(t, deps, got, name)
	}
	setupCmd := strings.Join(p.Services["temporal-setup"].Command, " ")
	for _, sa := range []string{"BookingStatus", "BookingProperty", "BookingAgent", "BookingSlotStart", "BookingCalendarSynced", "BookingCRMSynced"} {
		require.Contains(t, setupCmd, sa, "search attribute %s is registered", sa)
	}
}

// The environment the services get must use the names the binaries read.
func TestComposeEnvironmentMatchesWhatTheBinariesRead(t *testing.T) {
	t.Parallel()
	p := setup(t)
	read := map[string][]string{
		"worker": {"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "CALENDAR_CREDENTIALS_FILE", "CRM_BASE_URL", "CRM_TOKEN"},
		"api":    {"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "API_TOKEN", "RETELL_API_KEY", "VAPI_SECRET"},
	}
	for name, vars := range read {
		for _, v := range vars {
			_, ok := p.Services[name].Environment[v]
			require.True(t, ok, "%s sets %s", name, v)
		}
	}
	db := *p.Services["worker"].Environment["DATABASE_URL"]
	pw := *p.Services["postgresql"].Environment["BOOKINGSAGA_DB_PASSWORD"]
	require.Contains(t, db, "bookingsaga:"+pw+"@postgresql:5432/bookingsaga", "the worker logs in as the role the init script makes")
	init, err := os.ReadFile(filepath.Join(p.WorkingDir, "deploy", "postgres-init.sh"))
	require.NoError(t, err)
	require.Contains(t, string(init), "BOOKINGSAGA_DB_PASSWORD")
	require.Contains(t, string(init), "TEMPORAL_DB_PASSWORD")
	require.Equal(t, "on-failure", p.Services["temporal-schema"].Restart)
}

func TestComposeRefusesToStartWithoutAnAPIToken(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	file := filepath.Join(root, "docker-compose.yml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	_, err = loader.LoadWithContext(context.Background(), types.ConfigDetails{WorkingDir: root,
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}}, Environment: types.Mapping{}},
		func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
	require.ErrorContains(t, err, "API_TOKEN")
}
