package app

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/phone"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Mirrors configures the clients of the calendar and the CRM, the
// copies of the store's bookings: the worker writes them, and the agent
// API and the ops CLI read them (free/busy for availability, a booking's
// timeline). One configuration, read from the same flags and environment
// by every process; Catalog builds the catalogue's reads over them.
// Empty means that mirror is not kept.
type Mirrors struct {
	CalendarEndpoint    string
	CalendarCredentials string
	CalendarNoAuth      bool
	// CalendarTimeout bounds each calendar call, Google's and Graph's.
	CalendarTimeout time.Duration

	// Microsoft is the Microsoft 365 (Graph) app registration; no tenant
	// means no Microsoft calendars.
	Microsoft Microsoft

	// CRM is which CRM the mirror writes: "http" (or empty), the
	// generic JSON API at CRMBaseURL (none when that is empty), or
	// "hubspot".
	CRM        string
	CRMBaseURL string
	CRMToken   string
	CRMTimeout time.Duration
	HubSpot    HubSpot
	// CRMLanguage is the agency's language (en, fr, zh), that of the
	// titles staff see in their CRM.
	CRMLanguage string

	// The callers' text messages, through a Twilio account; no account
	// means none are sent. QuietFrom and QuietTo bound the night, after
	// local midnight in the property's zone, when none goes out.
	TwilioAccountSid, TwilioAuthToken, SMSFrom, TwilioEndpoint string
	// TwilioAuthTokenFile holds the token instead (a container secret).
	TwilioAuthTokenFile string
	QuietFrom, QuietTo  time.Duration
	// TextsPerNumberDay, TextsPerKeyHour, TextsPerAgencyHour and
	// TextCountries bound the
	// texts (activities.TextLimits); TextCountries is a comma-separated
	// list of ISO 3166 regions, empty for those of the properties.
	TextsPerNumberDay, TextsPerKeyHour, TextsPerAgencyHour int
	TextCountries                                          string
	// SMTP sends the callers' e-mails.
	SMTP SMTP
	// PublicURL is the root the callers reach the API at (https://…):
	// their texts and e-mails link their own page under it. Empty sends
	// no link; the texts then say to call.
	PublicURL string

	// WebhookLoopback lets webhook receivers be on loopback (the dev
	// stack's, a sidecar's); every other internal address stays refused.
	WebhookLoopback bool
}

// Egress is the rule for webhook receivers' addresses, the same in the
// API that registers them and the worker that delivers to them.
func (c Mirrors) Egress() *egress.Guard { return &egress.Guard{AllowLoopback: c.WebhookLoopback} }

// MirrorsFromEnv is the defaults, with what the environment sets.
func MirrorsFromEnv() Mirrors {
	return Mirrors{
		CalendarEndpoint: os.Getenv("CALENDAR_ENDPOINT"),
		// GOOGLE_APPLICATION_CREDENTIALS is read by the Google client itself.
		CalendarCredentials: os.Getenv("CALENDAR_CREDENTIALS_FILE"),
		CalendarTimeout:     10 * time.Second,
		// The Azure SDKs' variable names, so an app already set up for
		// them needs nothing new.
		Microsoft: Microsoft{TenantID: os.Getenv("AZURE_TENANT_ID"), ClientID: os.Getenv("AZURE_CLIENT_ID"),
			ClientSecret: os.Getenv("AZURE_CLIENT_SECRET"), CertificateFile: os.Getenv("AZURE_CLIENT_CERTIFICATE_PATH"),
			GraphEndpoint: os.Getenv("GRAPH_ENDPOINT"), LoginEndpoint: os.Getenv("AZURE_AUTHORITY_HOST")},
		CRM:             cmp.Or(os.Getenv("CRM"), "http"),
		HubSpot:         hubspotFromEnv(),
		CRMBaseURL:      os.Getenv("CRM_BASE_URL"),
		CRMToken:        os.Getenv("CRM_TOKEN"),
		CRMTimeout:      10 * time.Second,
		CRMLanguage:     cmp.Or(os.Getenv("CRM_LANGUAGE"), "en"),
		WebhookLoopback: os.Getenv("WEBHOOK_ALLOW_LOOPBACK") == "true",
		// Twilio's own variable names, as its SDKs and CLI read them.
		TwilioAccountSid: os.Getenv("TWILIO_ACCOUNT_SID"), TwilioAuthToken: os.Getenv("TWILIO_AUTH_TOKEN"),
		TwilioAuthTokenFile: os.Getenv("TWILIO_AUTH_TOKEN_FILE"),
		SMSFrom:             os.Getenv("SMS_FROM"), TwilioEndpoint: os.Getenv("TWILIO_ENDPOINT"),
		QuietFrom: 21 * time.Hour, QuietTo: 8 * time.Hour,
		TextsPerNumberDay: activities.DefaultTextsPerNumberDay, TextsPerKeyHour: activities.DefaultTextsPerKeyHour,
		TextsPerAgencyHour: activities.DefaultTextsPerAgencyHour,
		TextCountries:      os.Getenv("TEXT_COUNTRIES"),
		SMTP:               smtpFromEnv(),
		PublicURL:          os.Getenv("PUBLIC_URL"),
	}
}

// Register adds the flags, over the current values.
func (c *Mirrors) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.CalendarEndpoint, "calendar-endpoint", c.CalendarEndpoint, "Calendar API root; empty is Google (env CALENDAR_ENDPOINT)")
	fs.StringVar(&c.CalendarCredentials, "calendar-credentials", c.CalendarCredentials, "service-account JSON; empty is Application Default Credentials (env CALENDAR_CREDENTIALS_FILE)")
	fs.BoolVar(&c.CalendarNoAuth, "calendar-no-auth", c.CalendarNoAuth, "send no credentials (a local fake only)")
	fs.DurationVar(&c.CalendarTimeout, "calendar-timeout", c.CalendarTimeout, "per-attempt calendar call timeout (Google and Microsoft)")
	c.Microsoft.register(fs)
	fs.StringVar(&c.CRM, "crm", c.CRM, "the CRM mirrored to: http (the generic JSON API at -crm-url) or hubspot (env CRM)")
	c.HubSpot.register(fs)
	fs.StringVar(&c.CRMBaseURL, "crm-url", c.CRMBaseURL, "CRM API root; empty disables the CRM mirror (env CRM_BASE_URL)")
	fs.StringVar(&c.CRMToken, "crm-token", c.CRMToken, "CRM bearer token (env CRM_TOKEN)")
	fs.DurationVar(&c.CRMTimeout, "crm-timeout", c.CRMTimeout, "per-attempt CRM call timeout")
	fs.StringVar(&c.CRMLanguage, "crm-language", c.CRMLanguage, "the agency's language for CRM titles: en, fr or zh (env CRM_LANGUAGE)")
	fs.StringVar(&c.TwilioAccountSid, "twilio-account-sid", c.TwilioAccountSid, "Twilio account for the callers' text messages; empty sends none (env TWILIO_ACCOUNT_SID)")
	fs.StringVar(&c.TwilioAuthToken, "twilio-auth-token", c.TwilioAuthToken, "its auth token (env TWILIO_AUTH_TOKEN)")
	fs.StringVar(&c.TwilioAuthTokenFile, "twilio-auth-token-file", c.TwilioAuthTokenFile, "or a file holding it (env TWILIO_AUTH_TOKEN_FILE)")
	fs.StringVar(&c.SMSFrom, "sms-from", c.SMSFrom, "the account's E.164 number or MG… messaging service the texts come from (env SMS_FROM)")
	fs.StringVar(&c.TwilioEndpoint, "twilio-endpoint", c.TwilioEndpoint, "Twilio API root; empty is https://api.twilio.com (env TWILIO_ENDPOINT)")
	fs.DurationVar(&c.QuietFrom, "sms-quiet-from", c.QuietFrom, "no text from this long after local midnight in the property's zone...")
	fs.DurationVar(&c.QuietTo, "sms-quiet-to", c.QuietTo, "...to this long after it (equal: no quiet hours)")
	fs.IntVar(&c.TextsPerNumberDay, "texts-per-number-day", c.TextsPerNumberDay, "the most texts one number gets in 24 hours")
	fs.IntVar(&c.TextsPerKeyHour, "texts-per-key-hour", c.TextsPerKeyHour, "the most texts one API key's calls ask for in an hour (bookings' messages and one-time codes)")
	fs.IntVar(&c.TextsPerAgencyHour, "texts-per-agency-hour", c.TextsPerAgencyHour, "the most texts one agency's bookings and calls ask for in an hour, all its keys together")
	fs.StringVar(&c.TextCountries, "text-countries", c.TextCountries, "ISO 3166 regions texts may go to, e.g. FR,GB; empty is the regions of the properties' time zones (env TEXT_COUNTRIES)")
	c.SMTP.register(fs)
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "the API's root as the callers reach it; their messages link their own page under it, empty sends no link (env PUBLIC_URL)")
	fs.BoolVar(&c.WebhookLoopback, "webhook-allow-loopback", c.WebhookLoopback,
		"let webhook receivers be on loopback; private, link-local and metadata addresses stay refused (env WEBHOOK_ALLOW_LOOPBACK=true)")
}

// Validate reports every bad setting at once.
func (c Mirrors) Validate() error {
	var errs []error
	if c.CalendarTimeout <= 0 {
		errs = append(errs, fmt.Errorf("calendar-timeout must be positive, got %s", c.CalendarTimeout))
	}
	if _, err := speech.ParseLang(c.CRMLanguage); c.CRMLanguage != "" && err != nil {
		errs = append(errs, fmt.Errorf("crm-language: %w", err))
	}
	if c.CRMTimeout <= 0 {
		errs = append(errs, fmt.Errorf("crm-timeout must be positive, got %s", c.CRMTimeout))
	}
	switch c.CRM {
	case "", "http":
	case "hubspot":
		errs = append(errs, c.HubSpot.validate())
	default:
		errs = append(errs, fmt.Errorf("crm must be http or hubspot, got %q", c.CRM))
	}
	errs = append(errs, c.Microsoft.validate(), c.SMTP.validate())
	if c.TwilioAccountSid != "" && (c.TwilioAuthToken == "" && c.TwilioAuthTokenFile == "" || c.SMSFrom == "") {
		errs = append(errs, errors.New("twilio-account-sid needs twilio-auth-token (or its file) and sms-from"))
	}
	if c.TwilioAuthToken != "" && c.TwilioAuthTokenFile != "" {
		errs = append(errs, errors.New("set one of twilio-auth-token and twilio-auth-token-file"))
	}
	errs = append(errs, c.validateTexts(), validPublicURL(c.PublicURL))
	for name, d := range map[string]time.Duration{"sms-quiet-from": c.QuietFrom, "sms-quiet-to": c.QuietTo} {
		if d < 0 || d >= 24*time.Hour {
			errs = append(errs, fmt.Errorf("%s must be within a day, got %s", name, d))
		}
	}
	return errors.Join(errs...)
}

// validateTexts checks the caps (a cap is at least one) and the regions.
func (c Mirrors) validateTexts() error {
	var errs []error
	for name, n := range map[string]int{"texts-per-number-day": c.TextsPerNumberDay, "texts-per-key-hour": c.TextsPerKeyHour,
		"texts-per-agency-hour": c.TextsPerAgencyHour} {
		if n < 1 {
			errs = append(errs, fmt.Errorf("%s must be 1 or more, got %d", name, n))
		}
	}
	for _, r := range c.textCountries() {
		if !phone.KnownRegion(r) {
			errs = append(errs, fmt.Errorf("text-countries: %q is not an ISO 3166 region with phone numbers", r))
		}
	}
	return errors.Join(errs...)
}

// textCountries are the regions of TextCountries, upper case.
func (c Mirrors) textCountries() []string {
	var out []string
	for _, r := range strings.Split(c.TextCountries, ",") {
		if r = strings.ToUpper(strings.TrimSpace(r)); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// TextLimits are the bounds on texts, as the sender takes them.
func (c Mirrors) TextLimits() activities.TextLimits {
	return activities.TextLimits{PerNumberDay: c.TextsPerNumberDay, PerKeyHour: c.TextsPerKeyHour, PerAgencyHour: c.TextsPerAgencyHour, Countries: c.textCountries()}
}

// CalendarConfigured reports whether any Google calendar setting, or
// Google's own credentials variable, is present; without one there is no
// Google calendar.
func (c Mirrors) CalendarConfigured() bool {
	return c.CalendarEndpoint != "" || c.CalendarCredentials != "" || os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") != ""
}

// secretOrFile is value, or the trimmed contents of file when value is
// empty: a secret a container mounts as a file (the _FILE convention of
// Docker's images) stays out of the environment.
func secretOrFile(value, file string) (string, error) {
	if value != "" || file == "" {
		return value, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// validPublicURL checks the callers' pages' root: an absolute http(s)
// URL with no query or fragment, which their links append a path to.
func validPublicURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("public-url must be an absolute http(s) URL with no query, like https://book.example.com, got %q", raw)
	}
	return nil
}
