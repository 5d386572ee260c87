package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Webhooks (migration 010): endpoints, the deliveries the event log's
// trigger writes for them, and the pending marks booking.settled waits on.

// ErrNoEndpoint means no webhook endpoint has the id.
var ErrNoEndpoint = errors.New("no such webhook endpoint")

// Delivery is one event for one endpoint; its id is the receiver's
// idempotency key.
type Delivery struct {
	ID      int64           `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// PutEndpoint registers id at url, or points it at a new url. A new
// endpoint gets a fresh secret, returned (and created true) this once.
func (s *Store) PutEndpoint(ctx context.Context, id, url string) (secret []byte, created bool, err error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, false, fmt.Errorf("put webhook %s: %w", id, err)
	}
	err = s.retry(ctx, "put webhook", id, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
INSERT INTO webhook_endpoint (endpoint_id, url, secret) VALUES ($1, $2, $3)
ON CONFLICT (endpoint_id) DO UPDATE SET url = EXCLUDED.url
RETURNING secret, xmax = 0`, id, url, fresh).Scan(&secret, &created)
	})
	if err != nil {
		return nil, false, err
	}
	if !created {
		secret = nil
	}
	return secret, created, nil
}

// Endpoint reads one endpoint, with its secret.
func (s *Store) Endpoint(ctx context.Context, id string) (booking.WebhookEndpoint, error) {
	eps, err := s.endpoints(ctx, "WHERE e.endpoint_id = $1", id)
	if err != nil {
		return booking.WebhookEndpoint{}, err
	}
	if len(eps) == 0 {
		return booking.WebhookEndpoint{}, fmt.Errorf("webhook %s: %w", id, ErrNoEndpoint)
	}
	return eps[0], nil
}

// Endpoints lists every endpoint, without secrets.
func (s *Store) Endpoints(ctx context.Context) ([]booking.WebhookEndpoint, error) {
	eps, err := s.endpoints(ctx, "")
	for i := range eps {
		eps[i].Secret = nil
	}
	return eps, err
}

func (s *Store) endpoints(ctx context.Context, where string, args ...any) ([]booking.WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, `
SELECT e.endpoint_id, e.url, e.secret, e.delivered_at, e.failing_since, coalesce(e.last_error, ''),
       (SELECT count(*) FROM webhook_delivery d WHERE d.endpoint_id = e.endpoint_id AND d.delivered_at IS NULL)
FROM webhook_endpoint e `+where+` ORDER BY e.endpoint_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[booking.WebhookEndpoint])
}

// Due returns the oldest undelivered deliveries of an endpoint, in order.
func (s *Store) Due(ctx context.Context, id string, limit int) ([]Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT delivery_id, event_type, payload FROM webhook_delivery
WHERE endpoint_id = $1 AND delivered_at IS NULL ORDER BY delivery_id LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: due: %w", id, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Delivery])
}

// Delivered records that the endpoint's receiver took a delivery (2xx).
func (s *Store) Delivered(ctx context.Context, id string, delivery int64) error {
	return s.retry(ctx, "webhook delivered", id, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
WITH d AS (UPDATE webhook_delivery SET delivered_at = $3, attempts = attempts + 1 WHERE delivery_id = $2 AND delivered_at IS NULL)
UPDATE webhook_endpoint SET delivered_at = $3, failing_since = NULL, last_error = NULL WHERE endpoint_id = $1`, id, delivery, s.now())
		return err
	})
}

// Failed records a failed attempt; failing_since keeps the first.
func (s *Store) Failed(ctx context.Context, id string, delivery int64, why string) error {
	return s.retry(ctx, "webhook failed", id, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
WITH d AS (UPDATE webhook_delivery SET attempts = attempts + 1 WHERE delivery_id = $2)
UPDATE webhook_endpoint SET failing_since = coalesce(failing_since, $3), last_error = $4 WHERE endpoint_id = $1`,
			id, delivery, s.now(), why)
		return err
	})
}

// MarkPending notes that key was answered pending_reconciliation, so its
// first decision also goes out as booking.settled (once).
func (s *Store) MarkPending(ctx context.Context, key string) error {
	if err := booking.ValidateKey(key); err != nil {
		return fmt.Errorf("mark pending: %w", err)
	}
	return s.retry(ctx, "mark pending", key, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `SELECT webhook_mark_pending($1)`, key)
		return err
	})
}
