// Package api serves bookingsaga's agent-facing REST API (availability,
// intents, bookings, the catalogue, webhooks and the operator's reads) and
// the plumbing every route of the edge shares: keys and scopes, rate
// limits, request ids and access logs, bounded bodies, and one
// classification of errors (Classify). Booking calls go through the saga
// client; the catalogue through the Catalogue port the wiring fills.
// Receipts carry an explicit status that the agent words its reply from.
//
// The voice tools (package api/voice) are mounted on the same server by
// the wiring (Server.Mount); this package never imports them.
package api

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/uber-go/tally/v4"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/admission"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Config configures the API.
type Config struct {
	// Keys are the API keys callers present as bearer tokens; nil leaves
	// the API open (the dev stack only: the server logs a warning).
	Keys *apikey.Keyring
	// Limits bound each key's call rate; the zero value is DefaultLimits.
	Limits *ratelimit.Limits
	// MaxBody bounds request bodies, in bytes.
	MaxBody int64
	// CallTimeout bounds each request's calls to Temporal; a voice call
	// cannot wait long, and a failed call is answered retryable.
	CallTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Contacts reads and erases callers' contacts; without it those
	// routes answer 501.
	Contacts ContactVault
	// Bookings fills in what a reschedule leaves out; without it a
	// reschedule must name everything.
	Bookings Bookings
	// StoreZoneRules reads the zone rules' release of the newest booking
	// the workers committed, for the ops readiness; the store implements it.
	StoreZoneRules func(ctx context.Context) (string, error)
	// Timeline is one booking as the store, the saga and the mirrors have
	// it (GET /v1/ops/timeline/{request_key}), as JSON answers it; the
	// wiring fills it from the saga client. Without it the route answers
	// 501.
	Timeline func(ctx context.Context, key string) (any, error)
	// Catalogue reads and writes resources, pools and the policy, lists
	// bookings and answers availability; the catalogue implements it.
	Catalogue Catalogue
	// Names gives resources' display names for the spoken lines; without
	// it they say "the property" and "the agent".
	Names *speech.Names
	// Webhooks registers webhook endpoints and notes pending answers for
	// booking.settled; without it there are no webhooks.
	Webhooks Webhooks
	// Egress decides which receiver URLs may be registered; nil refuses
	// every internal address, loopback included.
	Egress *egress.Guard
	// Language is the spoken lines' language when a call names none.
	Language speech.Lang
	// Ready are what GET /readyz asks before it says the API can take
	// calls: Temporal, and the store where the process can reach it.
	Ready []health.Check
	Log   *zap.Logger
	// Admission admits the calls that start or ask Temporal, here and at
	// the voice tools alike; nil admits all.
	Admission *admission.Limiter
	// Metrics receives each call's latency by route and status class
	// (bookingsaga_request_latency); nil drops it.
	Metrics tally.Scope
}

// Bookings reads what the store holds of a booking and the policy in
// force, for a reschedule that names only what changes; the store
// implements it.
type Bookings interface {
	Lookup(ctx context.Context, key string) (booking.Booking, error)
	CurrentPolicy(ctx context.Context) (booking.Policy, error)
}

// Catalogue is the store's catalogue as the API reads and writes it:
// none of it starts a workflow. *catalog.Catalog implements it.
type Catalogue interface {
	Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error)
	Bookings(ctx context.Context, q booking.ListQuery) ([]booking.Booking, error)
	Resource(ctx context.Context, id string) (booking.Resource, error)
	PutResource(ctx context.Context, r booking.Resource) error
	Policy(ctx context.Context) (booking.Policy, error)
	PutPolicy(ctx context.Context, p booking.Policy) error
	Pool(ctx context.Context, id string) (booking.Pool, error)
	PutPool(ctx context.Context, p booking.Pool) error
}

// Server is the HTTP API.
type Server struct {
	client Sagas
	cfg    Config
	limits *ratelimit.Buckets
	// mounted are the routes of other packages (the voice tools).
	mounted []Route
}

// New builds the API over the saga client.
func New(c Sagas, cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 64 << 10
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	if cfg.Language == "" {
		cfg.Language = speech.English
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Keys == nil {
		cfg.Log.Warn("no API keys: /v1 is open to anyone who can reach it")
	}
	if cfg.Metrics == nil {
		cfg.Metrics = tally.NoopScope
	}
	limits := ratelimit.DefaultLimits()
	if cfg.Limits != nil {
		limits = *cfg.Limits
	}
	if cfg.Catalogue == nil {
		cfg.Catalogue = noCatalogue{}
	}
	return &Server{client: c, cfg: cfg, limits: ratelimit.New(limits)}
}

// Mount adds routes of another package (the voice tools), behind the
// same keys, limits and logs; call it before Handler.
func (s *Server) Mount(routes ...Route) { s.mounted = append(s.mounted, routes...) }

// Route is one served endpoint and the scope a key needs to call it;
// an empty scope is open (health, the OpenAPI document) or checks the
// caller itself (a voice platform's signature).
type Route struct {
	Method, Path string
	Scope        apikey.Scope
	Handle       func(w http.ResponseWriter, r *http.Request) error
	// Verify checks a voice platform's signature over the body, before
	// the call is charged to the platform's limit: an outsider's
	// unsigned calls must not spend it.
	Verify func(r *http.Request, body []byte) *Error
	// PerCall routes carry calls of their own (the voice tools'): the
	// request is not charged, and the handler charges each call it runs
	// with Charge.
	PerCall bool
}

// scopeFor is the scope a call needs: the route's, except that GET
// /v1/bookings without a reference lists bookings, which is staff's read.
func (rt Route) scopeFor(r *http.Request) apikey.Scope {
	if rt.Method == http.MethodGet && rt.Path == "/v1/bookings" && !r.URL.Query().Has("reference") {
		return apikey.ScopeOps
	}
	return rt.Scope
}

// Routes are every route the server serves, its own and those mounted.
func (s *Server) Routes() []Route {
	return append([]Route{
		{"GET", "/healthz", "", s.healthz, nil, false},
		{"GET", "/readyz", "", s.readyz, nil, false},
		{"GET", "/openapi.json", "", s.openAPI, nil, false},
		{"GET", "/v1/availability", apikey.ScopeAgent, s.availability, nil, false},
		{"POST", "/v1/intents", apikey.ScopeAgent, s.budgeted(s.intents), nil, false},
		{"POST", "/v1/bookings", apikey.ScopeAgent, s.budgeted(s.book), nil, false},
		{"GET", "/v1/bookings", apikey.ScopeAgent, s.bookings, nil, false},
		{"GET", "/v1/bookings/{request_key}", apikey.ScopeAgent, s.budgeted(s.status), nil, false},
		{"POST", "/v1/bookings/{request_key}/cancel", apikey.ScopeAgent, s.budgeted(s.cancel), nil, false},
		{"POST", "/v1/bookings/{request_key}/reschedule", apikey.ScopeAgent, s.budgeted(s.reschedule), nil, false},
		{"GET", "/v1/bookings/{request_key}/contact", apikey.ScopeAdmin, s.contact, nil, false},
		{"DELETE", "/v1/bookings/{request_key}/contact", apikey.ScopeAdmin, s.eraseContact, nil, false},
		{"PUT", "/v1/resources/{id}", apikey.ScopeAdmin, s.putResource, nil, false},
		{"GET", "/v1/resources/{id}", apikey.ScopeAgent, s.getResource, nil, false},
		{"PUT", "/v1/pools/{id}", apikey.ScopeAdmin, s.putPool, nil, false},
		{"GET", "/v1/pools/{id}", apikey.ScopeAgent, s.getPool, nil, false},
		{"PUT", "/v1/policy", apikey.ScopeAdmin, s.putPolicy, nil, false},
		{"GET", "/v1/policy", apikey.ScopeAgent, s.getPolicy, nil, false},
		{"GET", "/v1/ops/attention", apikey.ScopeOps, s.attention, nil, false},
		{"GET", "/v1/ops/readiness", apikey.ScopeOps, s.opsReadiness, nil, false},
		{"PUT", "/v1/webhooks/{id}", apikey.ScopeAdmin, s.putWebhook, nil, false},
		{"GET", "/v1/webhooks", apikey.ScopeOps, s.webhooks, nil, false},
		{"DELETE", "/v1/webhooks/{id}", apikey.ScopeAdmin, s.deleteWebhook, nil, false},
		{"POST", "/v1/webhooks/{id}/pause", apikey.ScopeAdmin, s.pauseWebhook, nil, false},
		{"POST", "/v1/webhooks/{id}/resume", apikey.ScopeAdmin, s.resumeWebhook, nil, false},
		{"POST", "/v1/webhooks/{id}/secret", apikey.ScopeAdmin, s.rotateWebhookSecret, nil, false},
		{"GET", "/v1/ops/timeline/{request_key}", apikey.ScopeOps, s.timeline, nil, false},
	}, s.mounted...)
}

// Handler returns the API with request ids, access logs and auth.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := s.Routes()
	s.registerMetrics(routes)
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	// What no route takes gets JSON too: 405 with Allow for a path served
	// under other methods, 404 otherwise.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, rt := range routes {
			if pathMatches(rt.Path, r.URL.Path) && !slices.Contains(allow, rt.Method) {
				allow = append(allow, rt.Method)
			}
		}
		if len(allow) == 0 {
			_ = WriteJSON(w, http.StatusNotFound, &Error{Code: string(booking.CodeNotFound), Message: "no such route: see GET /openapi.json"})
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		_ = WriteJSON(w, http.StatusMethodNotAllowed, &Error{Code: string(booking.CodeMethodNotAllowed),
			Message: fmt.Sprintf("%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method)})
	})
	return mux
}

// pathMatches reports whether path fits pattern, a {name} taking one
// segment, as the mux matches them.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if !(strings.HasPrefix(p, "{") && xs[i] != "") && p != xs[i] {
			return false
		}
	}
	return true
}

type ctxKey struct{}

// callerKey carries the name of the key a call came in under.
type callerKey struct{}

// Caller is the name of the key the request came in under: an API key's,
// or a voice platform's ("retell", "vapi") when it signed the call.
func Caller(ctx context.Context) string {
	name, _ := ctx.Value(callerKey{}).(string)
	return name
}

// MaxConversationID bounds a conversation id (a platform's call id, an
// X-Call-Id header, a backend's own): whatever keys on it holds ids of
// this size at most.
const MaxConversationID = 200

// Conversation is a conversation id as the service keys it: scoped by the
// key the call came in under, so that two callers (two backends, two
// platforms) who choose the same id never share a conversation, its keys
// or its bookings. An id over MaxConversationID bytes is refused.
func Conversation(ctx context.Context, id string) (string, *Error) {
	return ConversationOf(Caller(ctx), id)
}

// ConversationOf is Conversation for a call that came in under caller.
func ConversationOf(caller, id string) (string, *Error) {
	if len(id) > MaxConversationID {
		return "", BadRequest(booking.CodeInvalidConversationID, "the conversation's id is over %d bytes", MaxConversationID)
	}
	return caller + "/" + id, nil
}

func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		log := s.cfg.Log.With(zap.String("request_id", id))
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, log), s.cfg.CallTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		key, err := s.guard(r, rt)
		if err == nil {
			ctx := context.WithValue(r.Context(), callerKey{}, key.Name)
			if rt.PerCall {
				ctx = context.WithValue(ctx, chargeKey{}, charger{limits: s.limits, key: key, now: s.cfg.Now})
			}
			err = handle(rt, sw, r.WithContext(ctx))
		}
		if err != nil {
			writeError(sw, log, err)
		}
		s.latency(rt.Path, sw.status).Record(time.Since(start))
		// Paths carry request keys and resource ids, never contact details.
		log.Info("http", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.String("key", key.Name),
			zap.Int("status", sw.status), zap.Duration("took", time.Since(start)))
	})
}

// handle runs rt's handler. A panic is answered as a failure of the
// system (a retryable 503, logged by writeError) rather than a dropped
// connection; a booking call it cut short is idempotent by its key.
func handle(rt Route, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s %s panicked: %v", rt.Method, rt.Path, p)
		}
	}()
	return rt.Handle(w, r)
}

// latency is the timer of a route's calls ending with status: by route
// pattern and status class, so there are few series.
func (s *Server) latency(path string, status int) tally.Timer {
	return s.cfg.Metrics.Tagged(map[string]string{"route": path, "class": fmt.Sprintf("%dxx", status/100)}).Timer("request_latency")
}

// registerMetrics makes every route's latency series exist at zero, so
// dashboards and alerts see them before the first call.
func (s *Server) registerMetrics(routes []Route) {
	for _, rt := range routes {
		for _, status := range []int{200, 400, 500} {
			s.latency(rt.Path, status)
		}
	}
	// Admission: calls not sent, calls in flight, the limit (0: none).
	s.cfg.Metrics.Counter("booking_calls_shed_total").Inc(0)
	s.cfg.Metrics.Gauge("booking_calls_in_flight").Update(0)
	s.cfg.Metrics.Gauge("admission_limit").Update(float64(s.cfg.Admission.Limit()))
}

// guard authenticates and rate-limits a call to rt. A platform-signed
// route is limited under the platform's name.
func (s *Server) guard(r *http.Request, rt Route) (apikey.Key, error) {
	// A platform's signed calls come in under its name ("retell",
	// "vapi"), whichever of its URLs they take.
	platform, _, _ := strings.Cut(strings.TrimPrefix(rt.Path, "/v1/tools/"), "/")
	key := apikey.Key{Name: platform}
	if scope := rt.scopeFor(r); scope != "" {
		var e *Error
		if key, e = s.authenticate(r, scope); e != nil {
			return apikey.Key{}, e
		}
	} else if !strings.HasPrefix(rt.Path, "/v1/") {
		return apikey.Key{}, nil
	}
	if rt.Verify != nil {
		body, err := buffer(r)
		if err != nil {
			return key, BadRequest(booking.CodeBodyTooLarge, "body is over %d bytes", s.cfg.MaxBody)
		}
		if e := rt.Verify(r, body); e != nil {
			return key, e
		}
	}
	if rt.PerCall {
		return key, nil
	}
	if e := s.admit(key, r); e != nil {
		return key, e
	}
	return key, nil
}

func logger(r *http.Request) *zap.Logger { return Logger(r.Context()) }

// Logger is the request's logger, with its request id.
func Logger(ctx context.Context) *zap.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*zap.Logger); ok {
		return l
	}
	return zap.NewNop()
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz asks each dependency, briefly, whether it answers: a load
// balancer or compose health check stops sending calls to an API whose
// Temporal or store is gone, which liveness alone would not. What failed
// goes to the log and to the ops route.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	out, status := health.Probe(r.Context(), s.cfg.Ready)
	for name, got := range out.Checks {
		if got != "ok" {
			logger(r).Warn("not ready", zap.String("check", name), zap.String("error", got))
		}
	}
	return WriteJSON(w, status, health.Readiness{Status: out.Status})
}

// opsReadiness is readiness with each check's answer, for operators: a
// report, so 200 either way (the probe is /readyz).
func (s *Server) opsReadiness(w http.ResponseWriter, r *http.Request) error {
	out, _ := health.Probe(r.Context(), s.cfg.Ready)
	out.ZoneRules = localtime.Version()
	if s.cfg.StoreZoneRules != nil {
		if v, err := s.cfg.StoreZoneRules(r.Context()); err == nil && v != "" {
			out.StoreZoneRules, out.ZoneRulesSkew = v, v != out.ZoneRules
		}
	}
	return WriteJSON(w, http.StatusOK, out)
}

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI is the API's OpenAPI document, served at /openapi.json.
func OpenAPI() []byte { return openAPIDoc }

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPIDoc)
	return err
}
