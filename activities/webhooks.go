package activities

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// Webhook deliveries follow Standard Webhooks (standardwebhooks.com, the
// scheme Svix signs with): headers webhook-id (the delivery id, the
// receiver's idempotency key), webhook-timestamp (Unix seconds) and
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>".

// DeliverWebhooks posts an endpoint's due deliveries in order and marks
// each delivered once its receiver answers 2xx. With none due it waits up
// to in.Wait for one. A receiver that fails stops the run with an error,
// and Temporal retries it with backoff: nothing is skipped or lost.
func (a *Activities) DeliverWebhooks(ctx context.Context, in booking.WebhookInput) (booking.CountOutput, error) {
	ep, err := a.endpoint(ctx, in.EndpointID)
	if err != nil {
		return booking.CountOutput{}, err
	}
	deadline := time.Now().Add(in.Wait)
	n := 0
	for {
		var due []store.Delivery
		if !ep.Paused { // paused, deliveries wait, in order
			if due, err = a.Store.Due(ctx, ep.ID, 20); err != nil {
				return booking.CountOutput{Count: n}, storeError("webhook due", "", err)
			}
		}
		if len(due) == 0 {
			if done, err := idle(ctx, deadline, n); done || err != nil {
				return booking.CountOutput{Count: n}, err
			}
			if ep, err = a.endpoint(ctx, in.EndpointID); err != nil {
				return booking.CountOutput{Count: n}, err
			}
			continue
		}
		for _, d := range due {
			// Alive while it delivers, as while it waits: a backlog or a
			// slow receiver must not outlast the heartbeat timeout, or the
			// batch runs again beside the attempt still posting it.
			activity.RecordHeartbeat(ctx, n)
			if err := a.post(ctx, ep, d); err != nil {
				a.webhookCount(ctx, "failed")
				if ferr := a.Store.Failed(ctx, ep.ID, d.ID, problem(err)); ferr != nil {
					err = errors.Join(err, ferr)
				}
				return booking.CountOutput{Count: n}, fmt.Errorf("webhook %s delivery %d: %w", ep.ID, d.ID, err)
			}
			if err := a.Store.Delivered(ctx, ep.ID, d.ID); err != nil {
				return booking.CountOutput{Count: n}, storeError("webhook delivered", "", err)
			}
			a.webhookCount(ctx, "delivered")
			n++
		}
	}
}

// endpoint reads the endpoint again: its secret may have been rotated, it
// may have been paused, resumed, or deleted (which ends the dispatcher).
func (a *Activities) endpoint(ctx context.Context, id string) (booking.WebhookEndpoint, error) {
	ep, err := a.Store.Endpoint(ctx, id)
	if errors.Is(err, booking.ErrNoEndpoint) {
		return ep, temporal.NewNonRetryableApplicationError(err.Error(), booking.ErrTypeWebhookGone, err)
	}
	if err != nil {
		return ep, storeError("webhook endpoint", "", err)
	}
	return ep, nil
}

func (a *Activities) webhookCount(ctx context.Context, result string) {
	a.metrics(ctx).Tagged(map[string]string{"result": result}).Counter("webhook_deliveries_total").Inc(1)
}

// WebhookEvent is a delivery's body.
type WebhookEvent struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// webhooks is the client deliveries go through: only where the egress
// guard allows, no redirects, one pool of connections per worker.
func (a *Activities) webhooks() *http.Client {
	a.webhookOnce.Do(func() {
		g := a.Egress
		if g == nil {
			g = &egress.Guard{}
		}
		a.webhookClient = g.Client(10 * time.Second)
	})
	return a.webhookClient
}

// statusError is a receiver's answer other than 2xx.
type statusError struct{ status int }

func (e *statusError) Error() string { return fmt.Sprintf("receiver answered %d", e.status) }

// problem is what an endpoint's last_error shows of a failed delivery:
// the receiver's status code, or the kind of failure, never the error's
// text (it can carry another service's banner or an internal address).
func problem(err error) string {
	var se *statusError
	var refused *egress.RefusedError
	var ne net.Error
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &refused):
		return "refused: the receiver's name resolves to a " + refused.Why + " address"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer within 10s"
	}
	return "could not connect to the receiver"
}

func (a *Activities) post(ctx context.Context, ep booking.WebhookEndpoint, d store.Delivery) error {
	id := strconv.FormatInt(d.ID, 10)
	body, err := json.Marshal(WebhookEvent{ID: id, Type: d.Type, Data: d.Payload})
	if err != nil {
		return err
	}
	// Under the dispatcher's 10 s heartbeat timeout, with room for the
	// store's marks: a heartbeat goes before each post.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+Sign(ep.Secret, id, ts, body))
	res, err := a.webhooks().Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return &statusError{status: res.StatusCode}
	}
	return nil
}

// Sign is a delivery's signature: base64 HMAC-SHA256 of
// "{id}.{timestamp}.{body}" under the endpoint's secret.
func Sign(secret []byte, id, ts string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// idle is a sender's turn with nothing due: done once it has sent
// something (n) or waited until deadline; otherwise it heartbeats and
// waits a quarter of a second for the next look.
func idle(ctx context.Context, deadline time.Time, n int) (bool, error) {
	if n > 0 || !time.Now().Before(deadline) {
		return true, nil
	}
	activity.RecordHeartbeat(ctx, n)
	select {
	case <-ctx.Done():
		return true, ctx.Err()
	case <-time.After(250 * time.Millisecond):
		return false, nil
	}
}
