package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Webhooks (migration 010): endpoints, the deliveries the event log's
// trigger writes for them, and the pending marks booking.settled waits on.

// Delivery is one event for one endpoint; its id is the receiver's
// idempotency key.
type Delivery struct {
	ID      int64           `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// PutEndpoint registers id at url, or points it at a new url. A new
// endpoint gets a fresh secret, returned (and created true) this once; it
// rests sealed under a data key of the endpoint's own.
func (s *Store) PutEndpoint(ctx context.Context, id, url string) (secret []byte, created bool, err error) {
	fresh, dek, box, err := newSecret(id)
	if err != nil {
		return nil, false, fmt.Errorf("put webhook %s: %w", id, err)
	}
	err = s.retry(ctx, "put webhook", id, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `
INSERT INTO webhook_endpoint (endpoint_id, url, secret) VALUES ($1, $2, $3)
ON CONFLICT (agency_no, endpoint_id) DO UPDATE SET url = EXCLUDED.url
RETURNING xmax = 0`, id, url, box).Scan(&created); err != nil || !created {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO vault.webhook_key (endpoint_id, data_key) VALUES ($1, $2)`, id, dek)
			return err
		})
	})
	if err != nil || !created {
		return nil, false, err
	}
	return fresh, true, nil
}

// RotateSecret gives the endpoint a new secret, returned this once: from
// now on deliveries are signed with it alone.
func (s *Store) RotateSecret(ctx context.Context, id string) ([]byte, error) {
	fresh, dek, box, err := newSecret(id)
	if err != nil {
		return nil, fmt.Errorf("rotate webhook secret %s: %w", id, err)
	}
	err = s.retry(ctx, "rotate webhook secret", id, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE webhook_endpoint SET secret = $2 WHERE endpoint_id = $1`, id, box)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return booking.ErrNoEndpoint
			}
			// Replaced, not upserted: an upsert reads the old key, which
			// the API's role may not (migration 023).
			if _, err := tx.Exec(ctx, `DELETE FROM vault.webhook_key WHERE endpoint_id = $1`, id); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `INSERT INTO vault.webhook_key (endpoint_id, data_key) VALUES ($1, $2)`, id, dek)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

// newSecret makes a signing secret and its data key, and seals the one
// under the other, bound to the endpoint's id.
func newSecret(id string) (secret, dek, box []byte, err error) {
	secret, dek = make([]byte, 32), make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, nil, nil, err
	}
	if _, err := rand.Read(dek); err != nil {
		return nil, nil, nil, err
	}
	box, err = seal(dek, webhookAAD(id), secret)
	return secret, dek, box, err
}

func webhookAAD(id string) string { return "webhook/" + id }

// PauseEndpoint pauses or resumes an endpoint's deliveries; paused, they
// wait in order.
func (s *Store) PauseEndpoint(ctx context.Context, id string, paused bool) error {
	return s.retry(ctx, "pause webhook", id, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `UPDATE webhook_endpoint SET paused_at = CASE WHEN $2 THEN coalesce(paused_at, $3) END
WHERE endpoint_id = $1`, id, paused, s.now())
		if err == nil && tag.RowsAffected() == 0 {
			err = booking.ErrNoEndpoint
		}
		return err
	})
}

// DeleteEndpoint removes an endpoint, its undelivered deliveries and its
// secret; its dispatcher ends at its next look.
func (s *Store) DeleteEndpoint(ctx context.Context, id string) error {
	return s.retry(ctx, "delete webhook", id, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_endpoint WHERE endpoint_id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			err = booking.ErrNoEndpoint
		}
		return err
	})
}

// Endpoint reads one endpoint, with its secret opened.
func (s *Store) Endpoint(ctx context.Context, id string) (booking.WebhookEndpoint, error) {
	eps, err := s.endpoints(ctx, true, "WHERE e.endpoint_id = $1", id)
	if err != nil {
		return booking.WebhookEndpoint{}, err
	}
	if len(eps) == 0 {
		return booking.WebhookEndpoint{}, fmt.Errorf("webhook %s: %w", id, booking.ErrNoEndpoint)
	}
	return eps[0], nil
}

// Endpoints lists every endpoint, without secrets: it reads no key, so
// the API's role, which may not read them, lists endpoints too.
func (s *Store) Endpoints(ctx context.Context) ([]booking.WebhookEndpoint, error) {
	return s.endpoints(ctx, false, "")
}

// endpoints reads the endpoints where says, their secrets opened when
// secrets is set (the dispatcher's, which signs) and absent otherwise.
func (s *Store) endpoints(ctx context.Context, secrets bool, where string, args ...any) ([]booking.WebhookEndpoint, error) {
	keys := `NULL::bytea, NULL::bytea`
	join := ``
	if secrets {
		keys, join = `e.secret, k.data_key`, `LEFT JOIN vault.webhook_key k USING (endpoint_id)`
	}
	rows, err := s.pool.Query(ctx, `
SELECT e.endpoint_id, e.url, `+keys+`, e.delivered_at, e.failing_since, coalesce(e.last_error, ''),
       (SELECT count(*) FROM webhook_delivery d WHERE d.endpoint_id = e.endpoint_id AND d.delivered_at IS NULL),
       e.paused_at IS NOT NULL
FROM webhook_endpoint e `+join+` `+where+` ORDER BY e.endpoint_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	var eps []booking.WebhookEndpoint
	for rows.Next() {
		var ep booking.WebhookEndpoint
		var dek []byte
		if err := rows.Scan(&ep.ID, &ep.URL, &ep.Secret, &dek, &ep.DeliveredAt, &ep.FailingSince, &ep.LastError,
			&ep.Undelivered, &ep.Paused); err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
		if dek != nil { // sealed; a secret from before sealing is plain
			if ep.Secret, err = open(dek, webhookAAD(ep.ID), ep.Secret); err != nil {
				return nil, fmt.Errorf("webhook %s: secret: %w", ep.ID, err)
			}
		}
		eps = append(eps, ep)
	}
	return eps, rows.Err()
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
