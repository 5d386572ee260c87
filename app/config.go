package app

import (
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/temporalclient"
)

// Config is everything the worker needs, from flags with environment
// fallbacks. It is built once in main and validated before anything starts.
type Config struct {
	// Dev runs the embedded stack: Temporal with its UI, PostgreSQL, the
	// fake calendar and CRM, the demo catalogue and the agent API.
	Dev       bool
	DataDir   string
	APIListen string
	// APIKeysFile holds the agent API's hashed keys; empty is the data
	// dir's api-keys.json. The dev stack makes a fresh agent and admin key
	// in it at each start and prints them.
	APIKeysFile string
	// OpenAPI serves the dev stack's API without keys.
	OpenAPI bool
	// APIRateLimit is each API key's calls a second (0: no limit).
	APIRateLimit float64
	TemporalUI   string
	// TemporalStore is the dev stack's Temporal persistence: postgres (its
	// own PostgreSQL cluster, beside the store), sqlite, or empty for
	// postgres unless DATABASE_URL names another store (then sqlite); the
	// dev stack checks it (devstack.Options).
	TemporalStore  string
	CalendarListen string
	GraphListen    string
	CRMListen      string
	HubSpotListen  string
	SMSListen      string
	SMTPListen     string
	MailListen     string

	DatabaseURL string
	// Temporal is where the frontend is and how to reach it (TLS, an API key).
	Temporal  temporalclient.Config
	TaskQueue string
	LogLevel  zapcore.Level

	// The calendar and CRM clients' settings.
	Mirrors

	// ContactRetention, BookingRetention and EventRetention are how long
	// each kind of data is kept (README, Privacy): contacts and bookings
	// from the viewing's end, events from their writing.
	ContactRetention time.Duration
	BookingRetention time.Duration
	EventRetention   time.Duration
	ShutdownTimeout  time.Duration
	// CodecListen serves the Temporal codec server (payloadcodec) to
	// operators; empty is off. It needs the payload keys, and takes ops
	// keys from APIKeysFile as bearer tokens.
	CodecListen string
	// CodecOrigin lists the Web UI's origins (comma-separated) allowed to
	// call the codec from a browser.
	CodecOrigin string
	// CodecUIToken, when set, lets a call whose path starts with it in:
	// the Web UI sends no bearer token without OIDC, so its codec
	// endpoint carries one.
	CodecUIToken string
	// HealthListen serves GET /healthz while the worker runs; empty is off.
	HealthListen string
	// MetricsListen serves GET /metrics in Prometheus format; empty is off.
	MetricsListen string
	// PprofListen serves Go's profiles; empty is off.
	PprofListen string
	// ReconcileInterval is how often the reconciliation schedule runs. It
	// is never off: the run resends pending calls, repairs messages and
	// erases contacts at retention, as well as repairing the mirrors.
	ReconcileInterval time.Duration
	// MirrorYield is how long a mirror's write (calendar, CRM, a caller's
	// text or e-mail) waits for this worker's commits in flight to end;
	// 0 does not wait (activities.Activities.MirrorYield).
	MirrorYield time.Duration
	// CalendarRecheck bounds the commit's re-read of the calendars before
	// it decides (activities.Activities.RecheckBudget): a slow calendar
	// costs a commit this much at most.
	CalendarRecheck time.Duration
}

// maxCalendarRecheck keeps the re-check inside a quarter of the commit's
// default wait (3 s), the bound it had before it had its own.
const maxCalendarRecheck = 750 * time.Millisecond

// maxMirrorYield keeps a mirror's wait for commits well inside the first
// try that holds it (workflows.Settings.MirrorFirstTry, 2 s by default)
// and the mirrors' lag target of 2 s.
const maxMirrorYield = time.Second

func DefaultConfig() Config {
	return Config{
		DataDir:           "./.bookingsaga",
		APIRateLimit:      ratelimit.DefaultLimits().PerSecond,
		APIListen:         "127.0.0.1:8080",
		TemporalUI:        "127.0.0.1:8233",
		CalendarListen:    "127.0.0.1:8091",
		GraphListen:       "127.0.0.1:8093",
		CRMListen:         "127.0.0.1:8092",
		HubSpotListen:     "127.0.0.1:8097",
		SMSListen:         "127.0.0.1:8094",
		SMTPListen:        "127.0.0.1:8095",
		MailListen:        "127.0.0.1:8096",
		DatabaseURL:       os.Getenv("DATABASE_URL"),
		Temporal:          temporalclient.FromEnv(),
		TaskQueue:         booking.TaskQueue,
		LogLevel:          zapcore.InfoLevel,
		Mirrors:           MirrorsFromEnv(),
		ContactRetention:  90 * 24 * time.Hour,
		BookingRetention:  2 * 365 * 24 * time.Hour,
		EventRetention:    6 * 365 * 24 * time.Hour,
		ShutdownTimeout:   30 * time.Second,
		ReconcileInterval: 5 * time.Minute,
		MirrorYield:       250 * time.Millisecond,
		CalendarRecheck:   250 * time.Millisecond,
	}
}

func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" && !c.Dev {
		errs = append(errs, errors.New("database url is required (-database-url or DATABASE_URL)"))
	}
	if err := c.Mirrors.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.TaskQueue == "" {
		errs = append(errs, errors.New("task queue must not be empty"))
	}
	if err := c.Temporal.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.APIRateLimit < 0 {
		errs = append(errs, fmt.Errorf("api-rate-limit must not be negative, got %v", c.APIRateLimit))
	}
	if c.ReconcileInterval <= 0 {
		errs = append(errs, fmt.Errorf("reconcile-every must be positive, got %s: reconciliation also resends pending calls, "+
			"repairs callers' messages and erases contacts at retention (pause its schedule in the Temporal UI to hold repairs)", c.ReconcileInterval))
	}
	if c.MirrorYield < 0 || c.MirrorYield > maxMirrorYield {
		errs = append(errs, fmt.Errorf("mirror-yield must be from 0 to %s, got %s", maxMirrorYield, c.MirrorYield))
	}
	if c.CalendarRecheck < 10*time.Millisecond || c.CalendarRecheck > maxCalendarRecheck {
		errs = append(errs, fmt.Errorf("calendar-recheck must be from 10ms to %s, got %s", maxCalendarRecheck, c.CalendarRecheck))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"contact-retention", c.ContactRetention},
		{"booking-retention", c.BookingRetention}, {"event-retention", c.EventRetention}, {"shutdown-timeout", c.ShutdownTimeout}} {
		if d.d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.name, d.d))
		}
	}
	// Each retention hands its rows on to the next: a booking is
	// anonymised only once its contact is gone, and the log deletes only
	// anonymised rows.
	if c.BookingRetention < c.ContactRetention || c.EventRetention < c.BookingRetention {
		errs = append(errs, fmt.Errorf("retention must not shrink from contact to booking to event, got %s, %s, %s",
			c.ContactRetention, c.BookingRetention, c.EventRetention))
	}
	return errors.Join(errs...)
}
