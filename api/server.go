// Package api serves bookingsaga's agent-facing REST routes:
// availability, intents, bookings, the catalogue, webhooks and the
// operator's reads. Booking calls go through the desk (Sagas); the
// plumbing every route shares (keys, limits, errors, decoding) is
// internal/edge's, whose server the wiring mounts these routes on.
// Receipts carry an explicit status that the agent words its reply from.
package api

import (
	"context"
	"net/http"

	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/egress"
)

// Config configures the REST routes.
type Config struct {
	// Contacts reads and erases callers' contacts; without it those
	// routes answer 501.
	Contacts ContactVault
	// Timeline is one booking as the store, the saga and the mirrors have
	// it (GET /v1/ops/timeline/{request_key}), as JSON answers it; the
	// wiring fills it from the desk. Without it the route answers 501.
	Timeline func(ctx context.Context, key string) (any, error)
	// Webhooks registers webhook endpoints and notes pending answers for
	// booking.settled; without it there are no webhooks.
	Webhooks Webhooks
	// Egress decides which receiver URLs may be registered; nil refuses
	// every internal address, loopback included.
	Egress *egress.Guard
	// Agencies makes and lists agencies (a platform key's routes); without
	// it those routes answer 501.
	Agencies Agencies
	// PlatformSecrets sets the agency's voice platforms' secrets (its
	// admin's routes); without it those routes answer 501.
	PlatformSecrets PlatformSecrets
	// MirrorAccounts sets the agency's accounts at its mirrors (its
	// admin's routes), each once CheckAccount, the wiring's, found it
	// would connect as the worker connects it (its error is the answer's
	// message); without both those routes answer 501.
	MirrorAccounts MirrorAccounts
	CheckAccount   func(ctx context.Context, kind string, settings []byte) error
	// Profiles keeps the agency as its callers see it; without it those
	// routes answer 501.
	Profiles Profiles
	// Links revokes the links to a caller's page; without it that route
	// answers 501.
	Links Links
}

// Server is the REST routes over the desk.
type Server struct {
	client Sagas
	// set are the edge's settings every route reads; cfg the REST
	// routes' own.
	set edge.Settings
	cfg Config
}

// New serves the REST routes over c.
func New(c Sagas, set edge.Settings, cfg Config) *Server {
	return &Server{client: c, set: set.WithDefaults(), cfg: cfg}
}

// Routes are the REST routes, for edge.Server.Mount.
func (s *Server) Routes() []edge.Route {
	agent, admin, ops := apikey.ScopeAgent, apikey.ScopeAdmin, apikey.ScopeOps
	route := func(method, path string, scope apikey.Scope, h func(w http.ResponseWriter, r *http.Request) error) edge.Route {
		return edge.Route{Method: method, Path: path, Scope: scope, Handle: h}
	}
	list := route("GET", "/v1/bookings", agent, s.bookings)
	// Without a reference, GET /v1/bookings lists bookings: staff's read.
	list.ScopeOf = func(r *http.Request) apikey.Scope {
		if r.URL.Query().Has("reference") {
			return agent
		}
		return ops
	}
	return []edge.Route{
		route("GET", "/v1/availability", agent, s.availability),
		route("POST", "/v1/intents", agent, s.budgeted(s.intents)),
		route("POST", "/v1/bookings", agent, s.budgeted(s.book)),
		list,
		route("GET", "/v1/bookings/{request_key}", agent, s.budgeted(s.status)),
		route("POST", "/v1/bookings/{request_key}/cancel", agent, s.budgeted(s.cancel)),
		route("POST", "/v1/bookings/{request_key}/reschedule", agent, s.budgeted(s.reschedule)),
		route("GET", "/v1/bookings/{request_key}/contact", admin, s.contact),
		route("DELETE", "/v1/bookings/{request_key}/contact", admin, s.eraseContact),
		route("PUT", "/v1/resources/{id}", admin, s.putResource),
		route("GET", "/v1/resources/{id}", agent, s.getResource),
		route("PUT", "/v1/pools/{id}", admin, s.putPool),
		route("GET", "/v1/pools/{id}", agent, s.getPool),
		route("PUT", "/v1/policy", admin, s.putPolicy),
		route("GET", "/v1/policy", agent, s.getPolicy),
		route("GET", "/v1/ops/attention", ops, s.attention),
		route("PUT", "/v1/webhooks/{id}", admin, s.putWebhook),
		route("GET", "/v1/webhooks", ops, s.webhooks),
		route("DELETE", "/v1/webhooks/{id}", admin, s.deleteWebhook),
		route("POST", "/v1/webhooks/{id}/pause", admin, s.pauseWebhook),
		route("POST", "/v1/webhooks/{id}/resume", admin, s.resumeWebhook),
		route("POST", "/v1/webhooks/{id}/secret", admin, s.rotateWebhookSecret),
		route("GET", "/v1/ops/timeline/{request_key}", ops, s.timeline),
		route("PUT", "/v1/agencies/{id}", apikey.ScopePlatform, s.putAgency),
		route("GET", "/v1/agencies", apikey.ScopePlatform, s.listAgencies),
		route("GET", "/v1/voice/secrets", apikey.ScopeAdmin, s.listPlatformSecrets),
		route("PUT", "/v1/voice/secrets/{platform}", apikey.ScopeAdmin, s.putPlatformSecret),
		route("DELETE", "/v1/voice/secrets/{platform}", apikey.ScopeAdmin, s.deletePlatformSecret),
		route("GET", "/v1/mirrors", apikey.ScopeAdmin, s.listMirrorAccounts),
		route("PUT", "/v1/mirrors/{kind}", apikey.ScopeAdmin, s.putMirrorAccount),
		route("DELETE", "/v1/mirrors/{kind}", apikey.ScopeAdmin, s.deleteMirrorAccount),
		route("PUT", "/v1/profile", admin, s.putProfile),
		route("GET", "/v1/profile", agent, s.getProfile),
		route("DELETE", "/v1/bookings/{request_key}/link", admin, s.revokeLinks),
	}
}
