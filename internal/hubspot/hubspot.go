// Package hubspot mirrors bookings into HubSpot as meetings, through
// HubSpot's legacy CRM v3 paths (/crm/v3/objects/meetings, as HubSpot's
// OpenAPI documents of that version and its SDK, @hubspot/api-client,
// describe them; dated versions such as 2026-03 replace them by September
// 2027). Each booking is one meeting keyed by a unique custom property,
// bookingsaga_booking_id, written with the batch upsert by idProperty, so
// a retry, a replay or a second worker updates the same meeting. Like
// every mirror, nothing HubSpot says makes or unmakes a booking.
package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// DefaultBaseURL is HubSpot's API.
const DefaultBaseURL = "https://api.hubapi.com"

// Config configures the HubSpot client.
type Config struct {
	// BaseURL is the API root: DefaultBaseURL, or a fake's.
	BaseURL string
	// Token is a private app's access token, sent as a bearer token.
	Token string
	// Timeout bounds each HTTP attempt.
	Timeout time.Duration
	Retry   retry.Policy
	// PerTenSeconds is the private app's burst limit, per rolling ten
	// seconds (HubSpot's usage guidelines: 100 on Free and Starter, 190
	// on Professional and Enterprise); 0 is 100.
	PerTenSeconds int
	// DailyReserve is the share of the account's daily calls kept for
	// the booking path: once HubSpot says fewer remain, reads for
	// reconciliation wait for the next day rather than spend them. 0 is
	// 10 %.
	DailyReserve float64
}

func (c Config) validate() error {
	u, err := url.Parse(c.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("hubspot: base url %q must be an absolute http(s) url", c.BaseURL)
	case c.Token == "":
		return fmt.Errorf("hubspot: a private app's access token is required")
	case c.Timeout <= 0:
		return fmt.Errorf("hubspot: timeout must be positive")
	case c.PerTenSeconds < 0 || c.DailyReserve < 0 || c.DailyReserve >= 1:
		return fmt.Errorf("hubspot: per-ten-seconds must be >= 0 and the daily reserve in [0, 1)")
	}
	return nil
}

// Client is HubSpot as the CRM mirror (crm.CRM). One Client serves every
// activity of a worker, so its budget is the process's.
type Client struct {
	cfg    Config
	client *http.Client
	// burst keeps the process under the ten-second limit; HubSpot counts
	// per app, so workers sharing a token should split it.
	burst *rate.Limiter
	mu    sync.Mutex
	// schema and contactSchema are set once the meetings' and the
	// contacts' custom properties are known to exist.
	schema, contactSchema bool
	// daily is what HubSpot last said of the day's calls (its
	// X-HubSpot-RateLimit-Daily headers); zero until it says.
	daily dailyLimit
}

type dailyLimit struct{ max, remaining int }

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.PerTenSeconds == 0 {
		cfg.PerTenSeconds = 100
	}
	if cfg.DailyReserve == 0 {
		cfg.DailyReserve = 0.1
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// A burst of a tenth and the rest spread over the window never
	// passes PerTenSeconds in any ten seconds.
	burst := max(1, cfg.PerTenSeconds/10)
	r := rate.Limit(float64(cfg.PerTenSeconds-burst) / 10)
	return &Client{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}, burst: rate.NewLimiter(r, burst)}, nil
}

// Upsert writes v as its booking's meeting. HubSpot's upsert by a unique
// property is idempotent by itself, so over (the version a correction
// reads) changes nothing here: the same state sent again is the same
// meeting, and a correction is a write like any other.
func (c *Client) Upsert(ctx context.Context, v crm.Viewing, _ int) (crm.Record, error) {
	if err := c.ensureSchema(ctx); err != nil {
		return crm.Record{}, fmt.Errorf("hubspot upsert %s: %w", v.BookingID, err)
	}
	body := batchUpsert{Inputs: []upsertInput{{ID: v.BookingID, IDProperty: propBookingID, Properties: properties(v)}}}
	var res batchResult
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, meetingsPath+"/batch/upsert", body, &res)
	})
	if err == nil {
		err = res.err()
	}
	if err != nil {
		return crm.Record{}, fmt.Errorf("hubspot upsert %s: %w", v.BookingID, err)
	}
	return record(res.Results[0])
}

// Get reads the meeting of one booking; crm.ErrNotFound when HubSpot has
// none (never written, or deleted by hand). Reads are reconciliation's,
// so they keep off the day's reserve.
func (c *Client) Get(ctx context.Context, bookingID string) (crm.Record, error) {
	if err := c.reserved(); err != nil {
		return crm.Record{}, fmt.Errorf("hubspot get %s: %w", bookingID, err)
	}
	if err := c.ensureSchema(ctx); err != nil {
		return crm.Record{}, fmt.Errorf("hubspot get %s: %w", bookingID, err)
	}
	q := url.Values{"idProperty": {propBookingID}, "properties": {readProperties}, "associations": {"contacts"}}
	var obj object
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodGet, meetingsPath+"/"+url.PathEscape(bookingID)+"?"+q.Encode(), nil, &obj)
	})
	if err != nil {
		return crm.Record{}, fmt.Errorf("hubspot get %s: %w", bookingID, err)
	}
	return record(obj)
}

// reserved refuses a read, as a 429 would, once the day's remaining
// calls are within the reserve.
func (c *Client) reserved() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.daily
	if d.max == 0 || float64(d.remaining) > c.cfg.DailyReserve*float64(d.max) {
		return nil
	}
	return &crm.StatusError{Code: http.StatusTooManyRequests, RetryAfter: time.Hour,
		Body: fmt.Sprintf("%d of the day's %d HubSpot calls remain: kept for bookings", d.remaining, d.max)}
}
