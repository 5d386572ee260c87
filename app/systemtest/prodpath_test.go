package systemtest

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// A deployment does what the dev stack shows. The production build of the
// worker and of `starter serve` (-tags nodev, as the image builds them) run
// with exactly the command and environment docker-compose.yml gives them,
// for a deployer who set Twilio, SMTP and HubSpot as its comments say;
// only what a container has and this machine has not is rewritten (the
// services' host names, the mounted secrets' paths, the database's login,
// a namespace of the test's own). Two callers book over MCP, one agreeing
// to texts and one to e-mails, on a property whose agency keeps HubSpot:
// the text, the e-mail and both meetings arrive.
func TestTheComposeDeploymentTextsMailsAndWritesHubSpot(t *testing.T) {
	t.Parallel()
	pool, dbURL := pgtest.NewWithURL(t)
	d := deployment(t)
	svc := d.services(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bins := map[string]string{"worker": buildProduction(t, "./worker"), "starter": buildProduction(t, "./starter")}
	d.run(ctx, t, bins["starter"], svc["migrate"], dbURL)
	st := store.New(pool, store.Config{})
	require.NoError(t, st.SetPolicy(ctx, booking.Policy{Version: policyVersion, SlotMinutes: 30, OpensAt: 8 * time.Hour,
		ClosesAt: 20 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour}))
	require.NoError(t, st.UpsertResource(ctx, booking.Resource{ID: "paris-11", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CRM: "hubspot"}))
	require.NoError(t, st.UpsertResource(ctx, booking.Resource{ID: "agent-00", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))

	// As compose's temporal-setup does before the worker starts.
	c, err := client.NewClientFromExisting(temporalServer().GetDefaultClient(), client.Options{Namespace: d.namespace})
	require.NoError(t, err)
	require.NoError(t, app.EnsureNamespace(ctx, c, d.namespace))
	require.Eventually(t, func() bool { return app.EnsureSearchAttributes(ctx, c, d.namespace) == nil }, 30*time.Second, 200*time.Millisecond)

	health := d.start(t, bins["worker"], svc["worker"], dbURL)
	waitOK(ctx, t, "http://"+health+"/healthz")
	api := d.start(t, bins["starter"], svc["api"], dbURL)
	waitOK(ctx, t, "http://"+api+"/readyz")

	texted := bookArgs(t, 10)
	texted["contact"] = map[string]any{"name": "Camille Martin", "phone": "+33612345678", "notify": "sms", "keep_on_file": true}
	mailed := bookArgs(t, 12)
	mailed["contact"] = map[string]any{"name": "Ada Lovelace", "email": "ada@example.org", "notify": "email"}
	for _, args := range []map[string]any{texted, mailed} {
		line := mcpBook(ctx, t, "http://"+api, d.agentKey, args)
		require.True(t, strings.HasPrefix(line, "[confirmed]"), line)
	}
	// A confirmation the caller has just asked for goes at once, in the
	// quiet hours too (compose sets the defaults): the text, the e-mail
	// and the meetings.
	if !assert.Eventually(t, func() bool {
		return len(d.twilio.Sent()) == 1 && len(d.smtp.Received()) == 1 && len(d.hubspot.Meetings()) == 2
	}, time.Minute, 100*time.Millisecond) {
		var rows string
		_ = pool.QueryRow(ctx, `SELECT coalesce(string_agg(concat_ws(' ', kind, channel, status, not_before, last_error), '; '), '') FROM caller_message`).Scan(&rows)
		t.Fatalf("texts %d, e-mails %d, meetings %d; outbox: %s", len(d.twilio.Sent()), len(d.smtp.Received()), len(d.hubspot.Meetings()), rows)
	}
	require.Equal(t, "+33612345678", d.twilio.Sent()[0].To)
	require.Contains(t, d.smtp.Received()[0].To, "ada@example.org")
}

// composed is a deployment's environment and the fakes it points at.
type composed struct {
	dir                     string
	env                     types.Mapping
	agentKey                string
	twilio                  *smstest.Twilio
	smtp                    *mailtest.Sink
	hubspot                 *hubspottest.Account
	temporalAddr, namespace string
}

// deployment makes the fakes, the secrets as ./secrets/worker would hold
// them, and the deployer's environment (.env) turning every sender on.
func deployment(t *testing.T) *composed {
	t.Helper()
	d := &composed{dir: t.TempDir(), twilio: smstest.New(twilioAccount, twilioToken), smtp: mailtest.New("agency", "s3cret"),
		hubspot: hubspottest.New(hubspotToken), temporalAddr: temporalServer().GetFrontendHostPort(), namespace: "compose-" + uuid.NewString()[:8]}
	tw, hs := httptest.NewServer(d.twilio), httptest.NewServer(d.hubspot)
	t.Cleanup(func() { d.twilio.Release(); tw.Close(); d.hubspot.Release(); hs.Close() })
	smtpAddr, err := d.smtp.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.smtp.Close() })
	secrets := filepath.Join(d.dir, "secrets", "worker")
	require.NoError(t, os.MkdirAll(secrets, 0o700))
	for name, value := range map[string]string{"twilio-token": twilioToken, "smtp-password": "s3cret", "hubspot-token": hubspotToken} {
		require.NoError(t, os.WriteFile(filepath.Join(secrets, name), []byte(value+"\n"), 0o600))
	}
	keys, payload := filepath.Join(d.dir, "api-keys.json"), filepath.Join(d.dir, "payload-keys.json")
	secret, key, err := apikey.NewKey("voice", apikey.ScopeAgent)
	require.NoError(t, err)
	require.NoError(t, apikey.SaveKey(keys, key, true))
	d.agentKey = secret
	_, err = payloadcodec.AddKey(payload, "")
	require.NoError(t, err)
	d.env = types.Mapping{"API_KEYS_FILE": keys, "PAYLOAD_KEYS_FILE": payload, "POSTGRES_PASSWORD": "pw-admin",
		"BOOKINGSAGA_DB_PASSWORD": "pw-bookingsaga", "TEMPORAL_DB_PASSWORD": "pw-temporal", "GRAFANA_ADMIN_PASSWORD": "pw-grafana",
		"BOOKINGSAGA_WORKER_DB_PASSWORD": "pw-worker", "BOOKINGSAGA_API_DB_PASSWORD": "pw-api", "BOOKINGSAGA_RETENTION_DB_PASSWORD": "pw-retention",
		"TWILIO_ACCOUNT_SID": twilioAccount, "TWILIO_AUTH_TOKEN_FILE": "/run/secrets/worker/twilio-token", "SMS_FROM": "+33700000000",
		"TWILIO_ENDPOINT": tw.URL, "SMTP_ADDR": smtpAddr, "SMTP_USERNAME": "agency", "SMTP_PASSWORD_FILE": "/run/secrets/worker/smtp-password",
		"SMTP_TLS": "none", "MAIL_FROM": "visites@agence.example", "HUBSPOT_TOKEN_FILE": "/run/secrets/worker/hubspot-token", "HUBSPOT_URL": hs.URL}
	return d
}

// services loads ../../docker-compose.yml as `docker compose` would
// with d's environment.
func (d *composed) services(t *testing.T) types.Services {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	file := filepath.Join(root, "docker-compose.yml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{WorkingDir: root,
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: data}}, Environment: maps.Clone(d.env)},
		func(o *loader.Options) { o.SetProjectName("bookingsaga", true) })
	require.NoError(t, err)
	return p.Services
}

// process is svc's command line and environment on this machine: a
// container's paths and host names made local, every listen address a
// free loopback port (the first is returned), the database URL dbURL.
// The environment is compose's alone.
func (d *composed) process(t *testing.T, bin string, svc types.ServiceConfig, dbURL string) (*exec.Cmd, string) {
	t.Helper()
	local := strings.NewReplacer("/run/secrets/worker", filepath.Join(d.dir, "secrets", "worker"),
		"/run/secrets/payload_keys", d.env["PAYLOAD_KEYS_FILE"], "/run/secrets/api_keys", d.env["API_KEYS_FILE"],
		"temporal:7233", d.temporalAddr)
	argv := append(append([]string{"/usr/local/bin/worker"}, svc.Entrypoint...), svc.Command...) // the image's entrypoint
	if len(svc.Entrypoint) > 0 {
		argv = argv[1:]
	}
	argv[0] = bin
	var first string
	for i := 1; i < len(argv); i++ {
		if strings.HasPrefix(argv[i], "0.0.0.0:") {
			argv[i] = freeAddr(t)
			first = cmp.Or(first, argv[i])
		}
		argv[i] = local.Replace(argv[i])
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	for k, v := range svc.Environment {
		if v == nil {
			continue
		}
		value := local.Replace(*v)
		switch k {
		case "DATABASE_URL", "MIGRATE_DATABASE_URL", "RETENTION_DATABASE_URL":
			// The test cluster's own login: the roles compose makes are
			// deploy.TestTheInitScriptsRolesRunTheStore's.
			value = dbURL
		case "TEMPORAL_NAMESPACE":
			value = d.namespace
		}
		cmd.Env = append(cmd.Env, k+"="+value)
	}
	return cmd, first
}

// run runs svc to its end, as a one-shot service.
func (d *composed) run(ctx context.Context, t *testing.T, bin string, svc types.ServiceConfig, dbURL string) {
	t.Helper()
	cmd, _ := d.process(t, bin, svc, dbURL)
	run := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	run.Env = cmd.Env
	out, err := run.CombinedOutput()
	require.NoError(t, err, "%s: %s", cmd.Args, out)
}

// start starts svc and returns its first listen address.
func (d *composed) start(t *testing.T, bin string, svc types.ServiceConfig, dbURL string) string {
	t.Helper()
	cmd, addr := d.process(t, bin, svc, dbURL)
	startCmd(t, cmd)
	return addr
}

// buildProduction builds pkg as the image does (-tags nodev).
func buildProduction(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-tags", "nodev", "-o", bin, pkg)
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build %s: %s", pkg, out)
	return bin
}

// waitOK waits for url to answer 200.
func waitOK(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "%s answers 200", url)
}

// mcpBook books args over MCP in a call of its own and returns the line.
func mcpBook(ctx context.Context, t *testing.T, url, key string, args map[string]any) string {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "platform", Version: "1"}, nil)
	header := map[string]string{"Authorization": "Bearer " + key, "X-Call-Id": "call-" + uuid.NewString()}
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/v1/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: withHeaders{base: http.DefaultTransport, header: header}}}, nil)
	require.NoError(t, err)
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: args})
	require.NoError(t, err)
	return res.Content[0].(*mcp.TextContent).Text
}
