package api

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/egress"
)

// Webhooks registers endpoints; the store
// implements it.
type Webhooks interface {
	PutEndpoint(ctx context.Context, id, url string) (secret []byte, created bool, err error)
	Endpoints(ctx context.Context) ([]booking.WebhookEndpoint, error)
	DeleteEndpoint(ctx context.Context, id string) error
	PauseEndpoint(ctx context.Context, id string, paused bool) error
	RotateSecret(ctx context.Context, id string) ([]byte, error)
}

// WebhookStatus is an endpoint and how its deliveries stand, as GET
// /v1/webhooks and the attention list show it: never its secret.
type WebhookStatus struct {
	ID           string     `json:"id"`
	URL          string     `json:"url"`
	DeliveredAt  *time.Time `json:"delivered_at,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Undelivered  int        `json:"undelivered"`
	Paused       bool       `json:"paused,omitempty"`
}

func webhookStatus(ep booking.WebhookEndpoint) WebhookStatus {
	return WebhookStatus{ID: ep.ID, URL: ep.URL, DeliveredAt: ep.DeliveredAt, FailingSince: ep.FailingSince,
		LastError: ep.LastError, Undelivered: ep.Undelivered, Paused: ep.Paused}
}

// WebhookBody is PUT /v1/webhooks/{id}.
type WebhookBody struct {
	URL string `json:"url"`
}

// WebhookAnswer is an endpoint as registered; Secret only when it was
// created, for the receiver to verify signatures with.
type WebhookAnswer struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"`
}

var endpointID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// putWebhook registers an endpoint (or points it at a new URL) and makes
// sure its dispatcher runs. The secret is answered once, at creation.
func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Webhooks == nil {
		return &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable), Message: "this API has no store connection for webhooks"}
	}
	var body WebhookBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	id := r.PathValue("id")
	if !endpointID.MatchString(id) {
		return edge.BadRequest(booking.CodeMissingField, "the endpoint id must be 1 to 63 lower-case letters, digits, - or _, starting with a letter or digit")
	}
	guard := s.cfg.Egress
	if guard == nil {
		guard = &egress.Guard{}
	}
	if err := guard.CheckURL(r.Context(), body.URL); err != nil {
		// The service must not be a way into its own network (SSRF).
		return edge.BadRequest(booking.CodeRefusedURL, "%v", err)
	}
	secret, created, err := s.cfg.Webhooks.PutEndpoint(r.Context(), id, body.URL)
	if err != nil {
		return err
	}
	if err := s.client.StartWebhooks(r.Context(), id); err != nil {
		return err // the endpoint stands; a PUT again, or the worker's next start, starts it
	}
	if !created {
		return edge.WriteJSON(w, http.StatusOK, WebhookAnswer{ID: id, URL: body.URL})
	}
	return edge.WriteJSON(w, http.StatusCreated, WebhookAnswer{ID: id, URL: body.URL, Secret: "whsec_" + base64.StdEncoding.EncodeToString(secret)})
}

// endpointAction runs act on the endpoint of the path; an id the store
// has no endpoint for is 404.
func (s *Server) endpointAction(r *http.Request, act func(ctx context.Context, id string) error) (string, error) {
	if s.cfg.Webhooks == nil {
		return "", &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable), Message: "this API has no store connection for webhooks"}
	}
	id := r.PathValue("id")
	err := act(r.Context(), id)
	if errors.Is(err, booking.ErrNoEndpoint) {
		return id, &edge.Error{Status: http.StatusNotFound, Code: string(booking.CodeNotFound), Message: fmt.Sprintf("no webhook endpoint %q", id)}
	}
	return id, err
}

// deleteWebhook removes an endpoint with its undelivered deliveries.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := s.endpointAction(r, func(ctx context.Context, id string) error { return s.cfg.Webhooks.DeleteEndpoint(ctx, id) })
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

// pauseWebhook and resumeWebhook stop and restart deliveries; paused,
// they wait in order.
func (s *Server) pauseWebhook(w http.ResponseWriter, r *http.Request) error {
	return s.setPaused(w, r, true)
}
func (s *Server) resumeWebhook(w http.ResponseWriter, r *http.Request) error {
	return s.setPaused(w, r, false)
}

func (s *Server) setPaused(w http.ResponseWriter, r *http.Request, paused bool) error {
	id, err := s.endpointAction(r, func(ctx context.Context, id string) error { return s.cfg.Webhooks.PauseEndpoint(ctx, id, paused) })
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "paused": paused})
}

// rotateWebhookSecret gives the endpoint a new secret, answered once.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	var secret []byte
	id, err := s.endpointAction(r, func(ctx context.Context, id string) (err error) {
		secret, err = s.cfg.Webhooks.RotateSecret(ctx, id)
		return err
	})
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, WebhookAnswer{ID: id, Secret: "whsec_" + base64.StdEncoding.EncodeToString(secret)})
}

// webhooks lists the endpoints and how their deliveries stand.
func (s *Server) webhooks(w http.ResponseWriter, r *http.Request) error {
	out := []WebhookStatus{}
	if s.cfg.Webhooks == nil {
		return edge.WriteJSON(w, http.StatusOK, out)
	}
	eps, err := s.cfg.Webhooks.Endpoints(r.Context())
	if err != nil {
		return err
	}
	for _, ep := range eps {
		out = append(out, webhookStatus(ep))
	}
	return edge.WriteJSON(w, http.StatusOK, out)
}
