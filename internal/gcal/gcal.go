// Package gcal mirrors bookings into Google Calendar through the real
// calendar/v3 client. The calendar is a copy written after the booking
// store commits: an event never makes a booking, and a failed write never
// unmakes one.
//
// Every write is safe to repeat. The event id is derived from the request
// key, so a retry after a lost reply meets its own event (409) instead of
// creating a second one; a private extended property proves the event is
// ours before anything is changed.
package gcal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// Private extended property keys that mark an event as bookingsaga's.
const (
	propBookingID  = "bookingsaga_booking_id"
	propRequestKey = "bookingsaga_request_key"
	propManaged    = "bookingsaga_managed"
)

// Config configures the calendar mirror.
type Config struct {
	// Endpoint overrides Google's API root, e.g. a local fake's
	// "http://127.0.0.1:8095/calendar/v3/". Empty means Google.
	Endpoint string
	// CredentialsFile is a service-account JSON key. Empty means
	// Application Default Credentials, unless NoAuth is set.
	CredentialsFile string
	// CredentialsJSON is such a key itself (an agency's, from the vault),
	// in place of the file.
	CredentialsJSON []byte
	// NoAuth sends no credentials; only for a local fake.
	NoAuth bool
	// CallTimeout bounds each HTTP attempt.
	CallTimeout time.Duration
	// Retry is the in-call policy for rate limits and transient errors.
	Retry retry.Policy
	// InviteAttendees adds the booking's attendees (staff addresses) to the
	// event; off by default so no address leaves the store unasked.
	InviteAttendees bool
	// ReadOnly asks Google for the read-only events scope and free/busy
	// only: the API reads, the worker writes. The API's router refuses
	// the writes themselves (calendars.Router.ReadOnly).
	ReadOnly bool
}

func (c Config) validate() error {
	if c.CallTimeout <= 0 {
		return errors.New("gcal: call timeout must be positive")
	}
	if c.NoAuth && c.Endpoint == "" {
		return errors.New("gcal: no-auth is only for a local endpoint; set one")
	}
	return nil
}

// Mirror writes booking events to Google Calendar.
type Mirror struct {
	svc *calendar.Service
	cfg Config
}

// New builds the client from cfg.
func New(ctx context.Context, cfg Config) (*Mirror, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	scopes := []string{calendar.CalendarEventsScope, calendar.CalendarFreebusyScope}
	if cfg.ReadOnly {
		scopes[0] = calendar.CalendarEventsReadonlyScope
	}
	opts := []option.ClientOption{option.WithScopes(scopes...)}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
	}
	switch {
	case cfg.NoAuth:
		opts = append(opts, option.WithoutAuthentication())
	case len(cfg.CredentialsJSON) > 0:
		opts = append(opts, option.WithAuthCredentialsJSON(option.ServiceAccount, cfg.CredentialsJSON))
	case cfg.CredentialsFile != "":
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.CredentialsFile))
	}
	svc, err := calendar.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcal: new service: %w", err)
	}
	return &Mirror{svc: svc, cfg: cfg}, nil
}

// EventID is Google's event id of a booking (EventID below).
func (m *Mirror) EventID(requestKey string) string { return EventID(requestKey) }

// EventID derives the event id from a request key: "bs" and 40 hex digits,
// all valid base32hex, so every retry of one booking names the same event.
func EventID(requestKey string) string {
	sum := sha256.Sum256([]byte("bookingsaga/event/" + requestKey))
	return "bs" + hex.EncodeToString(sum[:20])
}

// classify separates what is worth retrying: rate limits (429 and 403
// rateLimitExceeded), 408, 5xx and transport errors, including a reply lost
// after the server saved the write.
func classify(err error) retry.Verdict {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return retry.Verdict{Retry: !errors.Is(err, context.Canceled)}
	}
	after := retry.ParseAfter(ge.Header)
	switch {
	case ge.Code == http.StatusTooManyRequests, ge.Code == http.StatusRequestTimeout, ge.Code >= 500:
		return retry.Verdict{Retry: true, After: after}
	case ge.Code == http.StatusForbidden && hasReason(ge, "rateLimitExceeded", "userRateLimitExceeded"):
		return retry.Verdict{Retry: true, After: after}
	}
	return retry.Verdict{}
}

func hasReason(ge *googleapi.Error, reasons ...string) bool {
	for _, item := range ge.Errors {
		for _, r := range reasons {
			if item.Reason == r {
				return true
			}
		}
	}
	return false
}

func isStatus(err error, codes ...int) bool {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return false
	}
	for _, c := range codes {
		if ge.Code == c {
			return true
		}
	}
	return false
}
