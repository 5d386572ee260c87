package crm

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// Config configures the HTTP/JSON CRM client.
type Config struct {
	// BaseURL is the API root; viewings live under BaseURL/v1/viewings.
	BaseURL string
	// Token is sent as a bearer token when set.
	Token string
	// Timeout bounds each HTTP attempt.
	Timeout time.Duration
	Retry   retry.Policy
}

func (c Config) validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("crm: base url %q must be an absolute http(s) url", c.BaseURL)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("crm: timeout must be positive")
	}
	return nil
}

// HTTP is a CRM reached over a small JSON API:
// PUT /v1/viewings/{booking_id} with an Idempotency-Key, and
// GET /v1/viewings/{booking_id}.
type HTTP struct {
	cfg    Config
	client *http.Client
}

// NewHTTP checks cfg and returns a client.
func NewHTTP(cfg Config) (*HTTP, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &HTTP{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}}, nil
}

// Upsert writes v. The Idempotency-Key is a hash of the body and of the
// version it corrects, so a retry of the same write (after a lost reply,
// say) is recognised by the CRM, while a changed record, or a correction
// over a version read since, is a new write.
func (h *HTTP) Upsert(ctx context.Context, v Viewing, over int) (Record, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return Record{}, fmt.Errorf("crm upsert %s: %w", v.BookingID, err)
	}
	key := idempotencyKey(body, over)
	if over == Absent {
		// A record deleted since the first write: a key of its own, or
		// the CRM answers the first write's reply again. The record is
		// keyed by booking id, so a second key can't make a second one.
		key = newKey()
	}
	var rec Record
	err = h.cfg.Retry.Do(ctx, Classify, func(ctx context.Context) error {
		return h.do(ctx, http.MethodPut, v.BookingID, body, key, &rec)
	})
	if err != nil {
		return Record{}, fmt.Errorf("crm upsert %s: %w", v.BookingID, err)
	}
	return rec, nil
}

// idempotencyKey names one write: a write that corrects nothing keeps the
// body's hash alone, as keys were before corrections named their version.
func idempotencyKey(body []byte, over int) string {
	h := sha256.New()
	h.Write(body)
	if over > 0 {
		fmt.Fprintf(h, "\nover version %d", over)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Get reads the record of one booking.
func (h *HTTP) Get(ctx context.Context, bookingID string) (Record, error) {
	var rec Record
	err := h.cfg.Retry.Do(ctx, Classify, func(ctx context.Context) error {
		return h.do(ctx, http.MethodGet, bookingID, nil, "", &rec)
	})
	if err != nil {
		return Record{}, fmt.Errorf("crm get %s: %w", bookingID, err)
	}
	return rec, nil
}

func (h *HTTP) do(ctx context.Context, method, bookingID string, body []byte, idemKey string, out *Record) error {
	u := h.cfg.BaseURL + "/v1/viewings/" + url.PathEscape(bookingID)
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	if h.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.Token)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode == http.StatusNotFound && method == http.MethodGet {
		return ErrNotFound
	}
	if res.StatusCode/100 != 2 {
		return &StatusError{Code: res.StatusCode, Body: string(data), RetryAfter: retry.ParseAfter(res.Header)}
	}
	return json.Unmarshal(data, out)
}

// StatusError is a non-2xx answer from the CRM.
type StatusError struct {
	Code       int
	Body       string
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("crm answered %d: %.200s", e.Code, e.Body)
}

// Permanent reports whether err is an answer that retrying cannot change:
// a 4xx other than 408, 425 and 429, or a record that does not exist.
func Permanent(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var se *StatusError
	return errors.As(err, &se) && !retryableStatus(se.Code)
}

// Classify is every CRM client's reading of a failure for its retries: a
// final answer (Permanent, or a cancelled call) stops them, a rate limit
// or an outage waits as long as the CRM asks, and anything else, a
// connection closed before the reply included, is tried again, since the
// write may have landed and every write is an upsert a retry can repeat.
func Classify(err error) retry.Verdict {
	var se *StatusError
	switch {
	case errors.Is(err, ErrNotFound):
		return retry.Verdict{}
	case errors.As(err, &se):
		return retry.Verdict{Retry: retryableStatus(se.Code), After: se.RetryAfter}
	case errors.Is(err, context.Canceled):
		return retry.Verdict{}
	default:
		return retry.Verdict{Retry: true}
	}
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooEarly ||
		code == http.StatusTooManyRequests || code >= 500
}
