// Package msgraph mirrors bookings into Microsoft 365 calendars through
// Microsoft Graph (v1.0), over net/http with OAuth 2.0 client credentials.
// Like Google's adapter (internal/gcal), it only ever copies the store:
// an event never makes a booking, and a failed write never unmakes one.
//
// Graph assigns event ids, so the adapter finds a booking's event by its
// marker, a single-value extended property holding the request key, and
// makes creation safe to repeat with Graph's transactionId: a POST resent
// after a lost reply returns the event the first one made. An event is
// ours only if it carries our marker for the booking *and* the
// transactionId we derive for it, which Graph never lets an update change;
// anything else is foreign, reported and never overwritten.
package msgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// Public endpoints; Config overrides them for a local fake or a national
// cloud.
const (
	DefaultEndpoint = "https://graph.microsoft.com/v1.0"
	DefaultLogin    = "https://login.microsoftonline.com"
	scope           = "https://graph.microsoft.com/.default"
)

// Config configures the Microsoft 365 mirror.
type Config struct {
	// Endpoint is Graph's root, DefaultEndpoint when empty.
	Endpoint string
	// Login is the Entra ID authority host, DefaultLogin when empty.
	Login string
	// TenantID and ClientID name the app registration.
	TenantID, ClientID string
	// ClientSecret, or CertificateFile (a PEM file holding the
	// certificate and its private key), proves the app: exactly one.
	ClientSecret    string
	CertificateFile string
	// CallTimeout bounds each HTTP attempt, the token request included.
	CallTimeout time.Duration
	// Retry is the in-call policy for throttling and transient errors.
	Retry retry.Policy
	// InviteAttendees adds the booking's attendees to the event, which
	// makes Exchange send them invitations; off by default.
	InviteAttendees bool
}

func (c Config) validate() error {
	var errs []error
	if c.TenantID == "" || c.ClientID == "" {
		errs = append(errs, errors.New("tenant id and client id are required"))
	}
	if (c.ClientSecret == "") == (c.CertificateFile == "") {
		errs = append(errs, errors.New("set exactly one of a client secret and a certificate file"))
	}
	if c.CallTimeout <= 0 {
		errs = append(errs, errors.New("call timeout must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("msgraph: %w", err)
	}
	return nil
}

// Mirror writes booking events to Microsoft 365 calendars.
type Mirror struct {
	http     *http.Client
	endpoint string
	cfg      Config
}

// New builds the client from cfg; a certificate is read here, so a bad
// file stops start-up rather than the first booking.
func New(cfg Config) (*Mirror, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ts, err := tokenSource(cfg)
	if err != nil {
		return nil, err
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	return &Mirror{http: &http.Client{Transport: &bearer{tokens: ts}}, endpoint: strings.TrimSuffix(endpoint, "/"), cfg: cfg}, nil
}

// EventID is "": Graph assigns an event's id when it is created.
func (m *Mirror) EventID(string) string { return "" }

// apiError is a Graph error reply.
type apiError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("graph %d %s: %s", e.Status, e.Code, e.Message)
}

func isStatus(err error, codes ...int) bool {
	var ae *apiError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.Status == c {
			return true
		}
	}
	return false
}

// classify retries what Graph's throttling guidance says to: 429 and 503
// (and 504, 500, 502) after Retry-After when given, and transport errors,
// among them a reply lost after the server saved the write.
func classify(err error) retry.Verdict {
	var ae *apiError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
			http.StatusInternalServerError, http.StatusBadGateway, http.StatusRequestTimeout:
			return retry.Verdict{Retry: true, After: ae.RetryAfter}
		}
		return retry.Verdict{}
	}
	var te *tokenError
	if errors.As(err, &te) {
		return retry.Verdict{Retry: te.transient}
	}
	return retry.Verdict{Retry: !errors.Is(err, context.Canceled)}
}

// request is one Graph call.
type request struct {
	method, path string
	query        url.Values
	header       http.Header
	body         any
}

// do sends req under the retry policy, each attempt with its own timeout,
// and decodes a 2xx reply into out (when not nil). Graph's final refusals
// come back as calendars.RefusedError wrapping the *apiError.
func (m *Mirror) do(ctx context.Context, req request, out any) error {
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return err
		}
	}
	err := m.cfg.Retry.Do(ctx, classify, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
		defer cancel()
		return m.once(ctx, req, payload, out)
	})
	if err != nil && !classify(err).Retry && !errors.Is(err, context.Canceled) {
		var ae *apiError
		var te *tokenError
		if errors.As(err, &ae) || errors.As(err, &te) {
			return &calendars.RefusedError{Err: err}
		}
	}
	return err
}

func (m *Mirror) once(ctx context.Context, req request, payload []byte, out any) error {
	u := m.endpoint + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload) // sets GetBody, so a 401 can resend it
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return err
	}
	for k, v := range req.header {
		hr.Header[k] = v
	}
	if payload != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	// Times come back in UTC whatever the mailbox's own zone, and event
	// ids stay the same if an event moves between folders.
	hr.Header.Add("Prefer", `outlook.timezone="UTC"`)
	hr.Header.Add("Prefer", `IdType="ImmutableId"`)
	res, err := m.http.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return replyError(res, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s %s reply: %w", req.method, req.path, err)
	}
	return nil
}

// replyError reads Graph's error envelope: {"error": {"code", "message"}}.
func replyError(res *http.Response, data []byte) error {
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(data, &env)
	if env.Error.Code == "" {
		env.Error.Code = http.StatusText(res.StatusCode)
	}
	return &apiError{Status: res.StatusCode, Code: env.Error.Code, Message: env.Error.Message, RetryAfter: retry.ParseAfter(res.Header)}
}

// userPath is the root of a mailbox's resources.
func userPath(mailbox string) string { return "/users/" + url.PathEscape(mailbox) }
