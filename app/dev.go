//go:build !nodev

package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uber-go/tally/v4"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// RunDev brings up the embedded stack, then the worker and the agent API
// on it, and takes it all down again when ctx ends.
func RunDev(ctx context.Context, cfg Config, logger *zap.Logger) error {
	began := time.Now()
	if err := devCodec(&cfg); err != nil {
		return err
	}
	if cfg.MetricsListen == "" {
		cfg.MetricsListen = "127.0.0.1:9464"
	}
	if err := devAddresses(cfg); err != nil {
		return err
	}
	apiLn, err := net.Listen("tcp", cfg.APIListen)
	if err != nil {
		return fmt.Errorf("%s is in use (is another stack running?); stop it or pick another with -api-listen: %w", cfg.APIListen, err)
	}
	defer apiLn.Close()
	stack, err := devstack.Start(ctx, devOptions(cfg, logger))
	if err != nil {
		return err
	}
	defer stack.Stop()
	if err := useStack(&cfg, stack); err != nil {
		return err
	}
	if err := seed(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	secrets, err := devKeys(&cfg)
	if err != nil {
		return err
	}
	// The API's call latencies go to the worker's /metrics.
	m := metrics.New(logger)
	stopAPI, err := serveAPI(ctx, cfg, logger, apiLn, m.Scope())
	if err != nil {
		return err
	}
	defer stopAPI()
	// A stop drains the API first: it takes no new calls and answers those
	// in flight, which need the worker; only then does the worker stop.
	workerCtx, stopWorker := afterDrain(ctx, stopAPI)
	defer stopWorker()
	// "Ready" means a booking made now is taken at once: the banner waits
	// for the worker, which checks the namespace and its schedule first.
	return start(workerCtx, cfg, logger, m, func() { banner(cfg, stack, secrets, time.Since(began)) })
}

// devOptions are the embedded stack's parts: the fakes of the services
// the configuration leaves unset.
func devOptions(cfg Config, logger *zap.Logger) devstack.Options {
	opts := devstack.Options{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, StoreDir: devStoreDir(cfg.DataDir), StoreDatabase: devDatabase,
		Frontend: cfg.Temporal.Address, CodecEndpoint: "http://" + cfg.CodecListen + "/" + cfg.CodecUIToken,
		UI: cfg.TemporalUI, Namespace: cfg.Temporal.Namespace, SearchAttributes: SearchAttributes(), Log: logger,
		TemporalStore: cfg.TemporalStore}
	if !cfg.CalendarConfigured() {
		opts.CalendarAddr = cfg.CalendarListen
	}
	if cfg.Microsoft.TenantID == "" {
		opts.GraphAddr = cfg.GraphListen
	}
	if cfg.CRMBaseURL == "" {
		opts.CRMAddr = cfg.CRMListen
	}
	if !cfg.HubSpot.configured() {
		opts.HubSpotAddr = cfg.HubSpotListen
	}
	if cfg.TwilioAccountSid == "" {
		opts.SMSAddr = cfg.SMSListen
	}
	if cfg.SMTP.Addr == "" {
		opts.SMTPAddr, opts.MailAddr = cfg.SMTPListen, cfg.MailListen
	}
	return opts
}

// useStack points cfg at the stack's store and at each fake it started.
func useStack(cfg *Config, stack *devstack.Stack) error {
	cfg.DatabaseURL = stack.DatabaseURL
	if stack.CalendarURL != "" {
		cfg.CalendarEndpoint, cfg.CalendarNoAuth = stack.CalendarURL+"/calendar/v3/", true
	}
	if stack.GraphURL != "" {
		cfg.Microsoft = Microsoft{TenantID: devstack.GraphApp.TenantID, ClientID: devstack.GraphApp.ClientID,
			ClientSecret: devstack.GraphApp.ClientSecret, GraphEndpoint: stack.GraphURL + "/v1.0", LoginEndpoint: stack.GraphURL}
	}
	if stack.CRMURL != "" {
		cfg.CRMBaseURL, cfg.CRMToken = stack.CRMURL, devstack.CRMToken
	}
	if stack.HubSpotURL != "" {
		if err := devHubSpot(cfg, stack.HubSpotURL); err != nil {
			return err
		}
	}
	if stack.SMSURL != "" {
		cfg.TwilioAccountSid, cfg.TwilioAuthToken, cfg.SMSFrom, cfg.TwilioEndpoint = devstack.TwilioAccount, devstack.TwilioToken,
			devstack.TwilioFrom, stack.SMSURL
	}
	if stack.SMTPAddr != "" {
		cfg.SMTP = SMTP{Addr: stack.SMTPAddr, Username: devstack.MailUser, Password: devstack.MailPassword,
			From: devstack.MailFrom, TLS: string(mail.TLSNone)}
	}
	// A receiver on this machine works out of the box; private,
	// link-local and metadata addresses stay refused here too.
	cfg.WebhookLoopback = true
	if cfg.PublicURL == "" { // the callers' pages, on this machine's API
		cfg.PublicURL = "http://" + cfg.APIListen
	}
	return nil
}

// afterDrain is the worker's context: it ends when ctx does, once
// stopAPI has drained the API.
func afterDrain(ctx context.Context, stopAPI func()) (context.Context, context.CancelFunc) {
	workerCtx, stopWorker := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			stopAPI()
			stopWorker()
		case <-workerCtx.Done(): // the worker ended by itself
		}
	}()
	return workerCtx, stopWorker
}

// seed applies the migrations and the demo catalogue's missing parts.
func seed(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect database: %w", err)
	}
	defer pool.Close()
	if err := migrateOwn(ctx, pool); err != nil {
		return err
	}
	return devstack.SeedDemo(ctx, store.New(pool, store.Config{}))
}

// serveAPI serves the agent API on ln, assembled as `starter serve`
// assembles it. Its stop drains the API once, however often it is called.
func serveAPI(ctx context.Context, cfg Config, logger *zap.Logger, ln net.Listener, scope tally.Scope) (func(), error) {
	ac := DefaultAPIConfig()
	ac.ClientConfig = ClientConfig{Temporal: cfg.Temporal, TaskQueue: cfg.TaskQueue, CommitWait: ac.CommitWait,
		DatabaseURL: cfg.DatabaseURL, Mirrors: cfg.Mirrors}
	ac.KeysFile, ac.Open, ac.Limits.PerSecond = cfg.APIKeysFile, cfg.OpenAPI, cfg.APIRateLimit
	a, err := NewAPI(ctx, ac, logger, scope)
	if err != nil {
		return nil, err
	}
	apiCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Serve(apiCtx, ln, logger); err != nil {
			logger.Error("agent API stopped", zap.Error(err))
		}
		a.Close()
	}()
	return func() {
		stop()
		<-done
	}, nil
}

// devCodec encrypts the dev stack's payloads too, with a key file in its
// data dir (made on first start), and serves the codec to its Web UI
// through a new secret path each start.
func devCodec(cfg *Config) error {
	if cfg.Temporal.PayloadKeysFile == "" {
		cfg.Temporal.PayloadKeysFile = filepath.Join(cfg.DataDir, "payload-keys.json")
		if _, err := os.Stat(cfg.Temporal.PayloadKeysFile); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return err
			}
			if _, err := payloadcodec.AddKey(cfg.Temporal.PayloadKeysFile, ""); err != nil {
				return err
			}
		}
	}
	if cfg.CodecListen == "" {
		cfg.CodecListen = "127.0.0.1:8098"
	}
	if cfg.CodecUIToken == "" {
		cfg.CodecUIToken = newToken()
	}
	if cfg.CodecOrigin == "" && cfg.TemporalUI != "" {
		_, port, _ := net.SplitHostPort(cfg.TemporalUI)
		cfg.CodecOrigin = "http://" + cfg.TemporalUI + ",http://localhost:" + port
	}
	return nil
}

// devAddresses refuses two of the stack's listeners on one address, by
// their flags, before anything starts: else the second to start stops the
// stack with "address already in use", naming neither flag.
func devAddresses(cfg Config) error {
	seen := map[string]string{}
	for _, l := range [][2]string{{"-api-listen", cfg.APIListen}, {"-temporal-address", cfg.Temporal.Address}, {"-temporal-ui", cfg.TemporalUI},
		{"-fake-calendar", cfg.CalendarListen}, {"-fake-graph", cfg.GraphListen}, {"-fake-crm", cfg.CRMListen},
		{"-fake-hubspot", cfg.HubSpotListen}, {"-fake-sms", cfg.SMSListen}, {"-fake-smtp", cfg.SMTPListen}, {"-fake-mail", cfg.MailListen},
		{"-codec-listen", cfg.CodecListen}, {"-health-listen", cfg.HealthListen}, {"-metrics-listen", cfg.MetricsListen},
		{"-pprof-listen", cfg.PprofListen}} {
		flag, addr := l[0], l[1]
		if addr == "" {
			continue
		}
		if first, taken := seen[addr]; taken {
			return fmt.Errorf("%s and %s are both %s: give one another address", first, flag, addr)
		}
		seen[addr] = flag
	}
	return nil
}

// devKeys puts a fresh agent key and admin key in the stack's keys file
// (keys added there by hand stay) and returns the secrets to print; with
// OpenAPI there are no keys.
func devKeys(cfg *Config) ([][2]string, error) {
	if cfg.OpenAPI {
		return nil, nil
	}
	if cfg.APIKeysFile == "" {
		cfg.APIKeysFile = filepath.Join(cfg.DataDir, "api-keys.json")
	}
	file := cfg.APIKeysFile
	var secrets [][2]string
	for _, k := range []struct {
		name   string
		scopes []apikey.Scope
	}{{"dev-agent", []apikey.Scope{apikey.ScopeAgent}}, {"dev-admin", []apikey.Scope{apikey.ScopeAdmin, apikey.ScopeOps}}} {
		secret, key, err := apikey.NewKey(k.name, k.scopes...)
		if err == nil {
			err = apikey.SaveKey(file, key, true)
		}
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, [2]string{k.name, secret})
	}
	return secrets, nil
}

func banner(cfg Config, stack *devstack.Stack, keys [][2]string, took time.Duration) {
	line := func(name, value string) { fmt.Fprintf(os.Stdout, "  %-15s %s\n", name, value) }
	fmt.Fprintf(os.Stdout, "bookingsaga dev stack ready in %.1fs\n", took.Seconds())
	line("agent API", "http://"+cfg.APIListen+"  (OpenAPI at /openapi.json)")
	for _, k := range keys {
		line(k[0]+" key", k[1])
	}
	if keys == nil {
		line("API keys", "none: the API is open (-open-api)")
	}
	line("Temporal", cfg.Temporal.Address+"  (namespace "+cfg.Temporal.Namespace+")")
	if cfg.TemporalUI != "" {
		line("Temporal UI", "http://"+cfg.TemporalUI)
	}
	line("PostgreSQL", stack.DatabaseURL)
	if stack.CalendarURL != "" {
		line("fake calendar", stack.CalendarURL)
	}
	if stack.GraphURL != "" {
		line("fake M365", stack.GraphURL+"  (Microsoft Graph; Hugo's calendar is there)")
	}
	if stack.CRMURL != "" {
		line("fake CRM", stack.CRMURL)
	}
	if stack.HubSpotURL != "" {
		line("fake HubSpot", stack.HubSpotURL+"  (the New York agency's CRM: GET /_fake/meetings, /_fake/contacts)")
	}
	if stack.SMSURL != "" {
		line("fake Twilio", stack.SMSURL+"  (the callers' texts: GET /messages; a reply: POST /_fake/reply webhook=http://"+cfg.APIListen+
			"/v1/tools/twilio/messages from=+33… body=STOP)")
	}
	if stack.MailURL != "" {
		line("SMTP sink", stack.SMTPAddr+"  (the callers' e-mails: GET "+stack.MailURL+"/mail)")
	}
	line("metrics", "http://"+cfg.MetricsListen+"/metrics")
	line("codec server", "http://"+cfg.CodecListen+"  (the UI's is wired in; the CLI: --codec-auth 'Bearer <dev-admin key>')")
	line("data", cfg.DataDir)
	fmt.Fprintln(os.Stdout, "Ctrl-C stops everything.")
}

// devHubSpot points the CRMs at the dev stack's HubSpot account, whose
// token is kept in the data dir as a deployment keeps a secret: in a
// file, never a flag.
func devHubSpot(cfg *Config, url string) error {
	file := filepath.Join(cfg.DataDir, "hubspot-token")
	if err := os.WriteFile(file, []byte(devstack.HubSpotToken+"\n"), 0o600); err != nil {
		return fmt.Errorf("dev hubspot token: %w", err)
	}
	cfg.HubSpot.URL, cfg.HubSpot.TokenFile = url, file
	return nil
}
