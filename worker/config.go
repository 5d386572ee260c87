package main

import (
	"flag"
	"os"

	"github.com/bookingsaga/bookingsaga/app"
)

// parseConfig reads flags over the defaults.
func parseConfig(args []string) (app.Config, error) {
	c := app.DefaultConfig()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.BoolVar(&c.Dev, "dev", false, "run the embedded stack (Temporal + UI, PostgreSQL, fakes, demo catalogue, agent API)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "dev: where the stack keeps its data")
	fs.StringVar(&c.APIListen, "api-listen", c.APIListen, "dev: the agent HTTP API's address")
	fs.StringVar(&c.APIKeysFile, "api-keys", os.Getenv("API_KEYS_FILE"), "API keys file: ops keys may use the codec server; dev: the agent API's, default <data-dir>/api-keys.json, where each start puts a fresh agent and admin key (env API_KEYS_FILE)")
	fs.StringVar(&c.CodecListen, "codec-listen", os.Getenv("CODEC_LISTEN"), "serve the codec server for the Temporal UI and CLI here (env CODEC_LISTEN); dev: 127.0.0.1:8098")
	fs.StringVar(&c.CodecOrigin, "codec-origin", os.Getenv("CODEC_ORIGIN"), "the Temporal Web UI's origin, allowed to call the codec server (env CODEC_ORIGIN)")
	fs.StringVar(&c.CodecUIToken, "codec-ui-token", os.Getenv("CODEC_UI_TOKEN"), "a secret path prefix the Web UI's codec endpoint carries (env CODEC_UI_TOKEN); dev: a new one each start")
	fs.BoolVar(&c.OpenAPI, "open-api", false, "dev: serve the agent API without keys (a warning is logged)")
	fs.Float64Var(&c.APIRateLimit, "api-rate-limit", c.APIRateLimit, "dev: calls a second per API key (a booking call repeated is free, a read is not); 0 is no limit")
	fs.StringVar(&c.TemporalUI, "temporal-ui", c.TemporalUI, "dev: the Temporal Web UI's address; empty for none")
	fs.StringVar(&c.TemporalStore, "temporal-store", c.TemporalStore, "dev: where the embedded Temporal keeps its state: postgres (the stack's PostgreSQL; the default) or sqlite (in the data dir)")
	fs.StringVar(&c.CalendarListen, "fake-calendar", c.CalendarListen, "dev: the fake Google Calendar's address (unless a real calendar is configured)")
	fs.StringVar(&c.GraphListen, "fake-graph", c.GraphListen, "dev: the fake Microsoft 365 tenant's address (unless -microsoft-tenant is set)")
	fs.StringVar(&c.CRMListen, "fake-crm", c.CRMListen, "dev: the fake CRM's address (unless -crm-url is set)")
	fs.StringVar(&c.HubSpotListen, "fake-hubspot", c.HubSpotListen, "dev: the fake HubSpot account's address (unless a HubSpot token is given)")
	fs.StringVar(&c.SMSListen, "fake-sms", c.SMSListen, "dev: the fake Twilio's address (unless -twilio-account-sid is set)")
	fs.StringVar(&c.SMTPListen, "fake-smtp", c.SMTPListen, "dev: the SMTP sink's address (unless -smtp-addr is set)")
	fs.StringVar(&c.MailListen, "fake-mail", c.MailListen, "dev: where the SMTP sink lists what it took, GET /mail")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "PostgreSQL connection string (env DATABASE_URL)")
	c.Temporal.Register(fs)
	fs.StringVar(&c.TaskQueue, "task-queue", c.TaskQueue, "Temporal task queue")
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	c.Mirrors.Register(fs)
	fs.DurationVar(&c.ContactRetention, "contact-retention", c.ContactRetention, "how long contact details are kept after the viewing")
	fs.DurationVar(&c.BookingRetention, "booking-retention", c.BookingRetention, "how long after the viewing a booking keeps its request key; then it is anonymised")
	fs.DurationVar(&c.EventRetention, "event-retention", c.EventRetention, "how long the event log keeps a row (anonymised once its booking is)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", os.Getenv("METRICS_LISTEN"), "address for GET /metrics (Prometheus), e.g. 0.0.0.0:9464 (env METRICS_LISTEN)")
	fs.StringVar(&c.PprofListen, "pprof-listen", c.PprofListen, "serve Go's profiles (/debug/pprof/) on this address, for load tests; keep it on loopback")
	fs.StringVar(&c.HealthListen, "health-listen", os.Getenv("HEALTH_LISTEN"), "address for GET /healthz, e.g. 0.0.0.0:9090 (env HEALTH_LISTEN)")
	fs.DurationVar(&c.ReconcileInterval, "reconcile-every", c.ReconcileInterval, "how often the reconciliation schedule runs (repairs, pending resends, message repair, erasure at retention); never 0")
	fs.DurationVar(&c.CalendarRecheck, "calendar-recheck", c.CalendarRecheck, "the most a commit waits for its re-read of the calendars before the store decides alone, flagged for reconciliation: 10ms to 750ms")
	fs.DurationVar(&c.MirrorYield, "mirror-yield", c.MirrorYield, "how long a mirror write (calendar, CRM, a caller's message) waits for this worker's commits in flight to end: 0 to 1s, 0 does not wait")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "grace period for running activities on shutdown")
	if err := fs.Parse(args); err != nil {
		return app.Config{}, err
	}
	return c, c.Validate()
}
