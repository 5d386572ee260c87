package deploy

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// required is what compose refuses to start without.
var required = types.Mapping{"API_KEYS_FILE": "./secrets/api-keys.json", "PAYLOAD_KEYS_FILE": "./secrets/payload-keys.json", "POSTGRES_PASSWORD": "pw-admin",
	"BOOKINGSAGA_DB_PASSWORD": "pw-bookingsaga", "TEMPORAL_DB_PASSWORD": "pw-temporal", "GRAFANA_ADMIN_PASSWORD": "pw-grafana",
	"BOOKINGSAGA_WORKER_DB_PASSWORD": "pw-worker", "BOOKINGSAGA_API_DB_PASSWORD": "pw-api", "BOOKINGSAGA_RETENTION_DB_PASSWORD": "pw-retention"}

// setup loads ../docker-compose.yml as `docker compose` would, with the
// required variables set.
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
		Environment: maps.Clone(required), // the loader adds to it
	}, func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
	require.NoError(t, err)
	return p
}

func TestComposeHasEveryService(t *testing.T) {
	t.Parallel()
	p := setup(t)
	require.ElementsMatch(t, []string{"postgresql", "temporal-schema", "temporal", "temporal-setup", "migrate", "retention", "worker", "api"},
		p.ServiceNames())
	require.Contains(t, p.DisabledServices, "temporal-ui", "the Web UI runs only with the ops profile")
	require.Contains(t, p.DisabledServices, "codec", "the codec server runs only with the ops profile")
	images := map[string]string{"postgresql": "postgres:", "temporal-schema": "temporalio/admin-tools:",
		"temporal": "temporalio/server:", "temporal-setup": "temporalio/admin-tools:"}
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
	require.Equal(t, map[string]string{"api": "8080:8080"}, published, "only the agent API is published")
	for _, name := range []string{"temporal-ui", "codec", "prometheus", "grafana"} {
		ops := p.DisabledServices[name]
		require.Len(t, ops.Ports, 1, name)
		require.Equal(t, "127.0.0.1", ops.Ports[0].HostIP, "the ops profile's %s listens on loopback only", name)
	}
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
		"migrate":         {"postgresql": types.ServiceConditionHealthy},
		"retention":       {"migrate": types.ServiceConditionCompletedSuccessfully},
		"worker":          {"migrate": types.ServiceConditionCompletedSuccessfully, "temporal-setup": types.ServiceConditionCompletedSuccessfully},
		"api":             {"worker": types.ServiceConditionHealthy},
	}
	for name, deps := range want {
		got := map[string]string{}
		s, ok := p.Services[name]
		if !ok {
			s = p.DisabledServices[name] // the ops profile's UI
		}
		for dep, cfg := range s.DependsOn {
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
		"worker": {"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "CALENDAR_CREDENTIALS_FILE", "CRM_BASE_URL", "CRM_TOKEN", "PAYLOAD_KEYS_FILE"},
		"api":    {"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "API_KEYS_FILE", "RETELL_API_KEY", "VAPI_SECRET", "VAPI_HMAC_SECRET", "PAYLOAD_KEYS_FILE"},
	}
	// Both write or read Microsoft 365 calendars with the same app.
	for _, name := range []string{"worker", "api"} {
		read[name] = append(read[name], "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH")
	}
	for name, vars := range read {
		for _, v := range vars {
			_, ok := p.Services[name].Environment[v]
			require.True(t, ok, "%s sets %s", name, v)
		}
	}
	// Each process logs in as its own role, which the init script makes
	// with the password the postgresql service passes it.
	init, err := os.ReadFile(filepath.Join(p.WorkingDir, "deploy", "postgres-init.sh"))
	require.NoError(t, err)
	for _, login := range []struct{ service, variable, role, password string }{
		{"worker", "DATABASE_URL", "bookingsaga_worker", "BOOKINGSAGA_WORKER_DB_PASSWORD"},
		{"migrate", "MIGRATE_DATABASE_URL", "bookingsaga", "BOOKINGSAGA_DB_PASSWORD"},
		{"retention", "RETENTION_DATABASE_URL", "bookingsaga_retention", "BOOKINGSAGA_RETENTION_DB_PASSWORD"},
		{"api", "DATABASE_URL", "bookingsaga_api", "BOOKINGSAGA_API_DB_PASSWORD"},
	} {
		pw := *p.Services["postgresql"].Environment[login.password]
		require.Contains(t, *p.Services[login.service].Environment[login.variable], "//"+login.role+":"+pw+"@postgresql:5432/bookingsaga",
			"%s %s", login.service, login.variable)
		require.Contains(t, string(init), "CREATE ROLE "+login.role+" LOGIN")
		require.Contains(t, string(init), login.password)
	}
	require.Contains(t, string(init), "TEMPORAL_DB_PASSWORD")
	require.Equal(t, "on-failure", p.Services["temporal-schema"].Restart)
	// The worker dials receivers' URLs: it holds no login but its own.
	for k, v := range p.Services["worker"].Environment {
		require.NotContains(t, []string{"MIGRATE_DATABASE_URL", "RETENTION_DATABASE_URL"}, k)
		if v != nil {
			require.NotContains(t, *v, "//bookingsaga:", "worker %s holds the owner's login", k)
			require.NotContains(t, *v, "//bookingsaga_retention:", "worker %s holds retention's login", k)
		}
	}
	require.Equal(t, "service_completed_successfully", p.Services["worker"].DependsOn["migrate"].Condition, "the worker starts on a migrated schema")
	require.Equal(t, []string{"retention", "-every", "1h"}, []string(p.Services["retention"].Command))
}

// Without a keys file or any password, compose refuses to start: nothing
// runs open or on a well-known password.
func TestComposeHasNoDefaultSecrets(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	file := filepath.Join(root, "docker-compose.yml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, name := range []string{"API_KEYS_FILE", "PAYLOAD_KEYS_FILE", "POSTGRES_PASSWORD", "BOOKINGSAGA_DB_PASSWORD", "TEMPORAL_DB_PASSWORD",
		"GRAFANA_ADMIN_PASSWORD", "BOOKINGSAGA_WORKER_DB_PASSWORD", "BOOKINGSAGA_API_DB_PASSWORD", "BOOKINGSAGA_RETENTION_DB_PASSWORD"} {
		env := types.Mapping{}
		for k, v := range required {
			if k != name {
				env[k] = v
			}
		}
		_, err = loader.LoadWithContext(context.Background(), types.ConfigDetails{WorkingDir: root,
			ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}}, Environment: env},
			func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
		require.ErrorContains(t, err, name, "compose starts without %s", name)
	}
	p := setup(t)
	require.Equal(t, "/run/secrets/api_keys", *p.Services["api"].Environment["API_KEYS_FILE"])
	require.Len(t, p.Services["api"].Secrets, 2)
	for _, name := range []string{"worker", "api"} {
		require.Equal(t, "/run/secrets/payload_keys", *p.Services[name].Environment["PAYLOAD_KEYS_FILE"], "%s encrypts payloads", name)
	}
	for _, pw := range []string{"postgres", "bookingsaga", "temporal"} {
		for name, s := range p.Services {
			for k, v := range s.Environment {
				if v != nil && strings.Contains(k, "PASSWORD") || k == "POSTGRES_PWD" {
					require.NotEqual(t, pw, *v, "%s's %s is a default password", name, k)
				}
			}
		}
	}
}

// The ops profile's UI decodes through the codec server with the UI token,
// and logs in with OIDC once a provider is set, not before.
func TestComposeWiresTheUIToTheCodecAndOIDC(t *testing.T) {
	t.Parallel()
	load := func(extra types.Mapping) *types.Project {
		root, err := filepath.Abs("..")
		require.NoError(t, err)
		file := filepath.Join(root, "docker-compose.yml")
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		env := maps.Clone(required)
		maps.Copy(env, extra)
		p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{WorkingDir: root,
			ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}}, Environment: env},
			func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
		require.NoError(t, err)
		return p
	}
	plain := load(types.Mapping{"CODEC_UI_TOKEN": "tok123"})
	ui := plain.DisabledServices["temporal-ui"].Environment
	require.Equal(t, "http://localhost:8094/tok123", *ui["TEMPORAL_CODEC_ENDPOINT"])
	require.Empty(t, *ui["TEMPORAL_AUTH_ENABLED"], "no provider, no login")
	codec := plain.DisabledServices["codec"]
	require.Equal(t, "tok123", *codec.Environment["CODEC_UI_TOKEN"])
	require.Equal(t, *ui["TEMPORAL_CORS_ORIGINS"], *codec.Environment["CODEC_ORIGIN"], "the codec answers the UI's origin")
	require.Equal(t, "8094", codec.Ports[0].Published)

	oidc := load(types.Mapping{"TEMPORAL_AUTH_PROVIDER_URL": "https://accounts.example.com", "TEMPORAL_AUTH_CLIENT_ID": "ui"})
	ui = oidc.DisabledServices["temporal-ui"].Environment
	require.Equal(t, "true", *ui["TEMPORAL_AUTH_ENABLED"])
	require.Equal(t, "https://accounts.example.com", *ui["TEMPORAL_AUTH_PROVIDER_URL"])
}

// The ops profile's Prometheus scrapes the worker's metrics port and loads
// the alert rules; Grafana is provisioned with the dashboard.
func TestComposeProvisionsPrometheusAndGrafana(t *testing.T) {
	t.Parallel()
	p := setup(t)
	prom := p.DisabledServices["prometheus"]
	var mounts []string
	for _, v := range prom.Volumes {
		mounts = append(mounts, v.Target)
		_, err := os.Stat(v.Source)
		require.NoError(t, err, "%s is in the repository", v.Source)
	}
	require.ElementsMatch(t, []string{"/etc/prometheus/prometheus.yml", "/etc/prometheus/alerts.yml"}, mounts)
	conf, err := os.ReadFile(filepath.Join(p.WorkingDir, "deploy", "prometheus.yml"))
	require.NoError(t, err)
	require.Contains(t, string(conf), "worker:9464", "it scrapes where the worker serves /metrics")
	require.Contains(t, p.Services["worker"].Command, "0.0.0.0:9464")
	for _, v := range p.DisabledServices["grafana"].Volumes {
		_, err := os.Stat(v.Source)
		require.NoError(t, err, "%s is in the repository", v.Source)
	}
}

// The image is the production build: every binary the Dockerfile builds
// leaves the dev stack out (-tags nodev), and that build links no
// Temporal server, Web UI or SQLite.
func TestTheImageLeavesTheDevStackOut(t *testing.T) {
	t.Parallel()
	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	builds := 0
	for line := range strings.Lines(string(dockerfile)) {
		if strings.Contains(line, "go build") {
			builds++
			require.Contains(t, line, "-tags nodev", "a binary is built with the dev stack: %s", line)
		}
	}
	require.Equal(t, 2, builds, "the worker and the starter")
	cmd := exec.Command("go", "list", "-tags", "nodev", "-deps", "./worker", "./starter")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "go.temporal.io/sdk/client", "the list is the real one")
	for _, banned := range []string{"go.temporal.io/server", "github.com/temporalio/ui-server", "modernc.org/sqlite", "bookingsaga/app/devstack"} {
		require.NotContains(t, string(out), banned, "the production build links %s", banned)
	}
}

// TestTheMTLSOverlayLocksTemporal loads the main file with the mTLS
// overlay: Temporal's server requires client certificates, and every
// service that dials it presents one signed by the same CA.
func TestTheMTLSOverlayLocksTemporal(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var files []types.ConfigFile
	for _, name := range []string{"docker-compose.yml", "deploy/compose.mtls.yml"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		files = append(files, types.ConfigFile{Filename: filepath.Join(root, name), Content: data})
	}
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{WorkingDir: root, ConfigFiles: files,
		Environment: maps.Clone(required)}, func(o *loader.Options) {
		o.SetProjectName("bookingsaga", true)
		o.Profiles = []string{"ops"}
	})
	require.NoError(t, err)
	env := func(service, name string) string {
		v := p.Services[service].Environment[name]
		require.NotNil(t, v, "%s has no %s", service, name)
		return *v
	}
	require.Equal(t, "true", env("temporal", "TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"))
	ca := env("temporal", "TEMPORAL_TLS_CLIENT1_CA_CERT")
	require.Equal(t, ca, env("temporal", "TEMPORAL_TLS_SERVER_CA_CERT"))
	for name, s := range p.Services {
		if s.Environment["TEMPORAL_ADDRESS"] == nil || name == "temporal" {
			continue
		}
		require.Equal(t, ca, env(name, "TEMPORAL_TLS_CA"), "%s trusts the server's CA", name)
		require.NotEmpty(t, env(name, "TEMPORAL_TLS_CERT"), "%s presents a client certificate", name)
		require.NotEmpty(t, env(name, "TEMPORAL_TLS_KEY"), name)
		require.Equal(t, "temporal", env(name, "TEMPORAL_TLS_SERVER_NAME"), name)
		mounted := false
		for _, v := range s.Volumes {
			mounted = mounted || strings.HasPrefix(ca, v.Target+"/") && strings.HasPrefix(v.Source, filepath.Join(root, "secrets"))
		}
		require.True(t, mounted, "%s mounts the certificates", name)
	}
	require.Equal(t, "http://localhost:8094/", env("temporal-ui", "TEMPORAL_CODEC_ENDPOINT"), "the overlay keeps the main file's settings")
}

// Each process holds only its own secrets (DLM5, N14): the public-facing
// API mounts no secret of the worker's (its calendar credentials that
// write, its HubSpot token that writes and GDPR-deletes) and reads the
// calendars and the CRM with read-only credentials of its own, or none.
// It listens on loopback unless the deployment says otherwise (N15).
func TestEachProcessHoldsOnlyItsOwnSecrets(t *testing.T) {
	t.Parallel()
	p := setup(t)
	mounts := func(name string) map[string]string {
		out := map[string]string{}
		for _, v := range p.Services[name].Volumes {
			out[filepath.Base(v.Source)] = v.Target
		}
		return out
	}
	require.Equal(t, map[string]string{"worker": "/run/secrets/worker"}, mounts("worker"))
	require.Equal(t, map[string]string{"api": "/run/secrets/api"}, mounts("api"))
	for _, v := range []string{"CALENDAR_CREDENTIALS_FILE", "HUBSPOT_TOKEN_FILE", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET",
		"AZURE_CLIENT_CERTIFICATE_PATH", "CRM_TOKEN"} {
		worker, api := p.Services["worker"].Environment[v], p.Services["api"].Environment[v]
		require.NotNil(t, worker, "the worker reads %s", v)
		if api != nil && *api != "" {
			require.NotEqual(t, *worker, *api, "the API holds the worker's %s", v)
			require.NotContains(t, *api, "/run/secrets/worker", v)
		}
	}
	require.Equal(t, "${API_CALENDAR_CREDENTIALS_FILE:-}", rawEnv(t, "api", "CALENDAR_CREDENTIALS_FILE"))
	require.Equal(t, "${API_HUBSPOT_TOKEN_FILE:-}", rawEnv(t, "api", "HUBSPOT_TOKEN_FILE"))
	// The API checks the texts' replies with Twilio's token only when
	// given its own: the worker's account alone must not stop it starting.
	require.Equal(t, "${API_TWILIO_ACCOUNT_SID:-}", rawEnv(t, "api", "TWILIO_ACCOUNT_SID"))
	require.Equal(t, "${API_TWILIO_AUTH_TOKEN_FILE:-}", rawEnv(t, "api", "TWILIO_AUTH_TOKEN_FILE"))
	require.Len(t, p.Services["api"].Ports, 1)
	require.Equal(t, "127.0.0.1", p.Services["api"].Ports[0].HostIP, "the API listens on loopback by default")
}

// rawEnv is service's variable v as docker-compose.yml writes it, before
// interpolation.
func rawEnv(t *testing.T, service, v string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	require.NoError(t, err)
	var doc struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	return doc.Services[service].Environment[v]
}

// Every setting docs/configuration.md gives the worker an environment
// variable for has a way in from compose: a deployment can turn on what
// the dev stack shows (texts, e-mails, HubSpot) without editing the file.
// A listen address is a flag of the worker's command instead, and the
// codec is a service of its own.
func TestComposeCarriesEveryWorkerSetting(t *testing.T) {
	t.Parallel()
	p := setup(t)
	worker := p.Services["worker"]
	command := strings.Join(worker.Command, " ")
	byFlag := map[string]string{"HEALTH_LISTEN": "-health-listen", "METRICS_LISTEN": "-metrics-listen"}
	for _, v := range documentedVariables(t, "## The worker") {
		if flag, ok := byFlag[v]; ok {
			require.Contains(t, command, flag, "the worker's %s", v)
			continue
		}
		if v == "CODEC_LISTEN" {
			require.Contains(t, p.DisabledServices, "codec")
			continue
		}
		_, ok := worker.Environment[v]
		require.True(t, ok, "docs/configuration.md documents %s for the worker; compose has no way to set it", v)
	}
}

// documentedVariables are the environment variables the table under
// heading in docs/configuration.md names (backquoted, upper case).
func documentedVariables(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), heading+"\n")
	require.True(t, ok, heading)
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range envName.FindAllStringSubmatch(cells[2], -1) {
			out = append(out, m[1])
		}
	}
	require.NotEmpty(t, out)
	return out
}

var envName = regexp.MustCompile("`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`")
