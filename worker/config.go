package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/bookingsaga/bookingsaga/workflows"
)

// config is everything the worker needs, from flags with environment
// fallbacks. It is built once in main and validated before anything starts.
type config struct {
	// Dev runs the embedded stack: Temporal with its UI, PostgreSQL, the
	// fake calendar and CRM, the demo catalogue and the agent API.
	Dev            bool
	DataDir        string
	APIListen      string
	APIToken       string
	TemporalUI     string
	CalendarListen string
	CRMListen      string

	DatabaseURL     string
	TemporalAddress string
	Namespace       string
	TaskQueue       string
	LogLevel        zapcore.Level

	CalendarEndpoint    string
	CalendarCredentials string
	CalendarNoAuth      bool
	CalendarTimeout     time.Duration

	CRMBaseURL string
	CRMToken   string
	CRMTimeout time.Duration

	ContactRetention time.Duration
	ShutdownTimeout  time.Duration
	// HealthListen serves GET /healthz while the worker runs; empty is off.
	HealthListen string
	// MetricsListen serves GET /metrics in Prometheus format; empty is off.
	MetricsListen string
	// ReconcileInterval is how often the reconciliation schedule runs; 0
	// leaves the schedule alone.
	ReconcileInterval time.Duration
}

func defaultConfig() config {
	return config{
		DataDir:          "./.bookingsaga",
		APIListen:        "127.0.0.1:8080",
		APIToken:         os.Getenv("API_TOKEN"),
		TemporalUI:       "127.0.0.1:8233",
		CalendarListen:   "127.0.0.1:8091",
		CRMListen:        "127.0.0.1:8092",
		DatabaseURL:      os.Getenv("DATABASE_URL"),
		TemporalAddress:  envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		Namespace:        envOr("TEMPORAL_NAMESPACE", "default"),
		TaskQueue:        workflows.TaskQueue,
		LogLevel:         zapcore.InfoLevel,
		CalendarEndpoint: os.Getenv("CALENDAR_ENDPOINT"),
		// GOOGLE_APPLICATION_CREDENTIALS is read by the Google client itself.
		CalendarCredentials: os.Getenv("CALENDAR_CREDENTIALS_FILE"),
		CalendarTimeout:     10 * time.Second,
		CRMBaseURL:          os.Getenv("CRM_BASE_URL"),
		CRMToken:            os.Getenv("CRM_TOKEN"),
		CRMTimeout:          10 * time.Second,
		ContactRetention:    90 * 24 * time.Hour,
		ShutdownTimeout:     30 * time.Second,
		ReconcileInterval:   5 * time.Minute,
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// parseConfig reads flags over the defaults.
func parseConfig(args []string) (config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.BoolVar(&c.Dev, "dev", false, "run the embedded stack (Temporal + UI, PostgreSQL, fakes, demo catalogue, agent API)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "dev: where the stack keeps its data")
	fs.StringVar(&c.APIListen, "api-listen", c.APIListen, "dev: the agent HTTP API's address")
	fs.StringVar(&c.APIToken, "api-token", c.APIToken, "dev: bearer token for the agent API; empty leaves it open (env API_TOKEN)")
	fs.StringVar(&c.TemporalUI, "temporal-ui", c.TemporalUI, "dev: the Temporal Web UI's address; empty for none")
	fs.StringVar(&c.CalendarListen, "fake-calendar", c.CalendarListen, "dev: the fake Google Calendar's address (unless a real calendar is configured)")
	fs.StringVar(&c.CRMListen, "fake-crm", c.CRMListen, "dev: the fake CRM's address (unless -crm-url is set)")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "PostgreSQL connection string (env DATABASE_URL)")
	fs.StringVar(&c.TemporalAddress, "temporal-address", c.TemporalAddress, "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&c.TaskQueue, "task-queue", c.TaskQueue, "Temporal task queue")
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.StringVar(&c.CalendarEndpoint, "calendar-endpoint", c.CalendarEndpoint, "Calendar API root; empty is Google (env CALENDAR_ENDPOINT)")
	fs.StringVar(&c.CalendarCredentials, "calendar-credentials", c.CalendarCredentials, "service-account JSON; empty is Application Default Credentials")
	fs.BoolVar(&c.CalendarNoAuth, "calendar-no-auth", c.CalendarNoAuth, "send no credentials (a local fake only)")
	fs.DurationVar(&c.CalendarTimeout, "calendar-timeout", c.CalendarTimeout, "per-attempt calendar call timeout")
	fs.StringVar(&c.CRMBaseURL, "crm-url", c.CRMBaseURL, "CRM API root; empty disables the CRM mirror (env CRM_BASE_URL)")
	fs.StringVar(&c.CRMToken, "crm-token", c.CRMToken, "CRM bearer token (env CRM_TOKEN)")
	fs.DurationVar(&c.CRMTimeout, "crm-timeout", c.CRMTimeout, "per-attempt CRM call timeout")
	fs.DurationVar(&c.ContactRetention, "contact-retention", c.ContactRetention, "how long contact details are kept")
	fs.StringVar(&c.MetricsListen, "metrics-listen", os.Getenv("METRICS_LISTEN"), "address for GET /metrics (Prometheus), e.g. 0.0.0.0:9464 (env METRICS_LISTEN)")
	fs.StringVar(&c.HealthListen, "health-listen", os.Getenv("HEALTH_LISTEN"), "address for GET /healthz, e.g. 0.0.0.0:9090 (env HEALTH_LISTEN)")
	fs.DurationVar(&c.ReconcileInterval, "reconcile-every", c.ReconcileInterval, "how often the reconciliation schedule runs; 0 leaves it alone")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "grace period for running activities on shutdown")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	return c, c.validate()
}

func (c config) validate() error {
	var errs []error
	if c.DatabaseURL == "" && !c.Dev {
		errs = append(errs, errors.New("database url is required (-database-url or DATABASE_URL)"))
	}
	if c.TemporalAddress == "" || c.Namespace == "" || c.TaskQueue == "" {
		errs = append(errs, errors.New("temporal address, namespace and task queue must not be empty"))
	}
	if c.ReconcileInterval < 0 {
		errs = append(errs, fmt.Errorf("reconcile-every must not be negative, got %s", c.ReconcileInterval))
	}
	for name, d := range map[string]time.Duration{"calendar-timeout": c.CalendarTimeout, "crm-timeout": c.CRMTimeout,
		"contact-retention": c.ContactRetention, "shutdown-timeout": c.ShutdownTimeout} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	return errors.Join(errs...)
}

// calendarConfigured reports whether any calendar setting, or Google's own
// credentials variable, is present; without one there is no calendar mirror.
func (c config) calendarConfigured() bool {
	return c.CalendarEndpoint != "" || c.CalendarCredentials != "" || os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") != ""
}
