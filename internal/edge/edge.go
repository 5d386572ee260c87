// Package edge is the agent edge's toolkit: one server behind keys and
// scopes, rate limits, admission, request ids and access logs, bounded
// bodies, and one classification of errors (Classify); what a call
// carries (a slot, a contact, a conversation) decoded once; and the
// OpenAPI document of every route. The routes themselves are packages of
// their own (api for REST, api/voice, api/staff), each mounted on the
// server by the wiring; none of them imports another.
package edge

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uber-go/tally/v4"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/admission"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Settings are what every route of the edge reads: the REST routes, the
// voice tools and the staff's routes alike, each written once.
type Settings struct {
	// MaxBody bounds request bodies, in bytes.
	MaxBody int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Language is the spoken lines' language when a call names none.
	Language speech.Lang
	// Metrics receives each call's latency by route and status class
	// (bookingsaga_request_latency) and the calls shed; nil drops them.
	Metrics tally.Scope
	// Admission admits the calls that start or ask Temporal, at the REST
	// routes and the voice tools alike; nil admits all.
	Admission *admission.Limiter
	// Catalogue reads and writes resources, pools and the policy, lists
	// bookings and answers availability; the catalogue implements it.
	Catalogue Catalogue
	// Bookings fills in what a reschedule leaves out; without it a
	// reschedule must name everything.
	Bookings Bookings
	// Names gives resources' display names for the spoken lines; without
	// it they say "the property" and "the agent".
	Names *speech.Names
}

// WithDefaults fills what s leaves out.
func (s Settings) WithDefaults() Settings {
	if s.MaxBody <= 0 {
		s.MaxBody = 64 << 10
	}
	if s.Language == "" {
		s.Language = speech.English
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Metrics == nil {
		s.Metrics = tally.NoopScope
	}
	if s.Catalogue == nil {
		s.Catalogue = noCatalogue{}
	}
	return s
}

// Config configures the edge's server.
type Config struct {
	Settings
	// Keys are the API keys callers present as bearer tokens; nil leaves
	// the API open (the dev stack only: the server logs a warning).
	Keys *apikey.Keyring
	// Limits bound each key's call rate; the zero value is DefaultLimits.
	Limits *ratelimit.Limits
	// CallTimeout bounds each request's calls to Temporal; a voice call
	// cannot wait long, and a failed call is answered retryable.
	CallTimeout time.Duration
	// Ready are what GET /readyz asks before it says the API can take
	// calls: Temporal, and the store where the process can reach it.
	Ready []health.Check
	// StoreZoneRules reads the zone rules' release of the newest booking
	// the workers committed, for the ops readiness; the store implements it.
	StoreZoneRules func(ctx context.Context) (string, error)
	// Agencies finds the agency a key acts for; without it only keys of
	// the default agency are served. The store implements it.
	Agencies Agencies
	Log      *zap.Logger
}

// Agencies finds an agency by its id: booking.ErrNotFound when the
// deployment has none of that id.
type Agencies interface {
	FindAgency(ctx context.Context, id string) (agency.Agency, error)
}

// Bookings reads what the store holds of a booking and the policy in
// force, for a reschedule that names only what changes; the store
// implements it.
type Bookings interface {
	Lookup(ctx context.Context, key string) (booking.Booking, error)
	CurrentPolicy(ctx context.Context) (booking.Policy, error)
}

// Catalogue is the store's catalogue as the edge reads and writes it:
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

// Server serves the edge's routes behind its keys, limits, request ids
// and access logs; the packages of routes (api, api/voice, api/staff) are
// mounted on it.
type Server struct {
	cfg    Config
	limits *ratelimit.Buckets
	routes []Route
	// agencies are the agencies found for keys, by id: an agency is
	// never renumbered, so each is looked up once. missing are the ids
	// found to be none lately, so that unsigned calls to an unknown
	// agency's tool URLs do not each cost the store a read.
	agencies sync.Map
	missing  recentlyMissing
}

// New builds the edge's server; mount the routes, then serve Handler.
func New(cfg Config) *Server {
	cfg.Settings = cfg.Settings.WithDefaults()
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Keys == nil {
		cfg.Log.Warn("no API keys: /v1 is open to anyone who can reach it")
	}
	limits := ratelimit.DefaultLimits()
	if cfg.Limits != nil {
		limits = *cfg.Limits
	}
	return &Server{cfg: cfg, limits: ratelimit.New(limits)}
}

// Settings are the settings the mounted routes read, defaults filled.
func (s *Server) Settings() Settings { return s.cfg.Settings }

// Mount adds routes behind the same keys, limits and logs; call it before
// Handler.
func (s *Server) Mount(routes ...Route) { s.routes = append(s.routes, routes...) }

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
	// ScopeOf, when set, is the scope a call needs, read from the call:
	// one path may serve two readers.
	ScopeOf func(r *http.Request) apikey.Scope
}

// scopeFor is the scope a call needs: the route's, or what ScopeOf reads.
func (rt Route) scopeFor(r *http.Request) apikey.Scope {
	if rt.ScopeOf != nil {
		return rt.ScopeOf(r)
	}
	return rt.Scope
}

// Routes are every route the server serves: health, readiness and the
// OpenAPI document, and those mounted.
func (s *Server) Routes() []Route {
	return append([]Route{
		{Method: "GET", Path: "/healthz", Handle: s.healthz},
		{Method: "GET", Path: "/readyz", Handle: s.readyz},
		{Method: "GET", Path: "/openapi.json", Handle: s.openAPI},
		{Method: "GET", Path: "/v1/ops/readiness", Scope: apikey.ScopeOps, Handle: s.opsReadiness},
	}, s.routes...)
}

// Handler returns the routes with request ids, access logs and auth.
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
			r, err = s.actFor(r, key)
		}
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
			zap.String("agency", key.Agency), zap.Int("status", sw.status), zap.Duration("took", time.Since(start)))
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
	s.cfg.Metrics.Tagged(map[string]string{"agency": agency.Default.Label()}).Counter("booking_calls_shed_total").Inc(0)
	s.cfg.Metrics.Gauge("booking_calls_in_flight").Update(0)
	s.cfg.Metrics.Gauge("admission_limit").Update(float64(s.cfg.Admission.Limit()))
}

// guard authenticates and rate-limits a call to rt. A platform-signed
// route is limited under the platform's name.
func (s *Server) guard(r *http.Request, rt Route) (apikey.Key, error) {
	key, e := signedBy(rt, r)
	if e != nil {
		return apikey.Key{}, e
	}
	if scope := rt.scopeFor(r); scope != "" {
		var e *Error
		if key, e = s.authenticate(r, scope); e != nil {
			return apikey.Key{}, e
		}
	} else if !strings.HasPrefix(rt.Path, "/v1/") {
		// Open (health, the OpenAPI document), or a caller's page, which
		// limits each link itself.
		return key, nil
	}
	if rt.Verify != nil {
		body, err := Buffer(r)
		if err != nil {
			return key, BadRequest(booking.CodeBodyTooLarge, "body is over %d bytes", s.cfg.MaxBody)
		}
		// An agency's signature is checked against the agency's secret:
		// the call acts for it already.
		vr, err := s.actFor(r, key)
		if err != nil {
			return key, err
		}
		if e := rt.Verify(vr, body); e != nil {
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
