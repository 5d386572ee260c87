package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/speech"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/callerpage"
	"github.com/bookingsaga/bookingsaga/api/texts"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/admission"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/internal/temporalclient"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ClientConfig is what every process that starts sagas or reads the store
// shares: the agent API, the CLI and the dev stack's API.
type ClientConfig struct {
	Temporal   temporalclient.Config
	TaskQueue  string
	CommitWait time.Duration
	// DatabaseURL lets the process read the store directly: availability,
	// what the store decided on a key, the ops reads, and the contact keys.
	DatabaseURL string
	// Mirrors are the calendar and CRM, read for availability's free/busy
	// and for a booking's timeline.
	Mirrors Mirrors
}

// DefaultClientConfig is the defaults, with what the environment sets.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{Temporal: temporalclient.FromEnv(), TaskQueue: booking.TaskQueue, CommitWait: 3 * time.Second,
		DatabaseURL: os.Getenv("DATABASE_URL"), Mirrors: MirrorsFromEnv()}
}

// Validate reports every bad setting at once.
func (c ClientConfig) Validate() error {
	var errs []error
	if c.TaskQueue == "" {
		errs = append(errs, errors.New("task queue must not be empty"))
	}
	errs = append(errs, c.Temporal.Validate())
	if c.CommitWait <= 0 || c.CommitWait > time.Minute {
		errs = append(errs, fmt.Errorf("commit-wait must be between 0 and 1m, got %s", c.CommitWait))
	}
	errs = append(errs, c.Mirrors.Validate())
	return errors.Join(errs...)
}

// Reads is a process's own small connection to the store: contact keys,
// readiness, and the catalogue's reads (availability, decisions, the ops
// reads), which start no workflow.
type Reads struct {
	Store   *store.Store
	Catalog *catalog.Catalog
	pool    *pgxpool.Pool
}

// DefaultAPIConns sizes the API's pool when the URL does not.
const DefaultAPIConns = 16

// OpenReads connects to the store at url with the mirrors of m.
func OpenReads(ctx context.Context, url string, m Mirrors, log *zap.Logger) (*Reads, error) {
	pc, err := store.PoolConfig(url)
	if err != nil {
		return nil, err
	}
	// pgx's own default (the larger of 4 and the CPUs) starves contact
	// seals behind availability reads; pool_max_conns, when given, wins.
	if !strings.Contains(url, "pool_max_conns") {
		pc.MaxConns = DefaultAPIConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect database: %w", err)
	}
	st := store.New(pool, store.Config{})
	cat, err := m.Catalog(ctx, st, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &Reads{Store: st, Catalog: cat, pool: pool}, nil
}

// Ping is the store's readiness: reachable, over a login that keeps
// agencies apart (store.CheckIsolation).
func (r *Reads) Ping(ctx context.Context) error {
	if err := r.pool.Ping(ctx); err != nil {
		return err
	}
	return r.Store.CheckIsolation(ctx)
}

// Close closes the connections.
func (r *Reads) Close() { r.pool.Close() }

// Conn is a command's connection: the desk over the saga client and the
// store's reads, when a database is configured, and the Temporal client
// under it.
type Conn struct {
	Temporal client.Client
	desk     *desk.Desk
	reads    *Reads
}

// ErrNoStore is a command that reads the store run with no database
// configured.
var ErrNoStore = errors.New("no database: this command reads the store")

// Connect builds the connection of cfg. Temporal is dialled on first use,
// so reads of the store work while Temporal is down.
func Connect(ctx context.Context, cfg ClientConfig, logger *zap.Logger) (*Conn, error) {
	tc, err := dialTemporal(cfg.Temporal, logger, client.NewLazyClient)
	if err != nil {
		return nil, err
	}
	c := &Conn{Temporal: tc}
	if cfg.DatabaseURL != "" {
		if c.reads, err = OpenReads(ctx, cfg.DatabaseURL, cfg.Mirrors, logger); err != nil {
			tc.Close()
			return nil, err
		}
		c.desk = newDesk(tc, cfg, c.reads, desk.Options{})
	}
	return c, nil
}

// Desk is the connection's door to the bookings; without a database it
// says so.
func (c *Conn) Desk() (*desk.Desk, error) {
	if c.desk == nil {
		return nil, ErrNoStore
	}
	return c.desk, nil
}

// Catalogue is the store's catalogue, for the commands that read it;
// without a database it says so.
func (c *Conn) Catalogue() (edge.Catalogue, error) {
	if c.reads == nil {
		return nil, ErrNoStore
	}
	return c.reads.Catalog, nil
}

// ActFor makes ctx act for the agency of id, as a key of that agency
// does: the commands read, book and start in its space.
func (c *Conn) ActFor(ctx context.Context, id string) (context.Context, error) {
	if c.reads == nil {
		return ctx, ErrNoStore
	}
	a, err := c.reads.Store.FindAgency(ctx, id)
	if err != nil {
		return ctx, err
	}
	return agency.With(ctx, a), nil
}

// Close closes what Connect opened.
func (c *Conn) Close() {
	if c.reads != nil {
		c.reads.Close()
	}
	c.Temporal.Close()
}

// newDesk is the desk of a process over tc and reads: the saga client
// as cfg sets it, sealing contacts with the store's keys.
func newDesk(tc client.Client, cfg ClientConfig, reads *Reads, opts desk.Options) *desk.Desk {
	opts.Sagas.TaskQueue, opts.Sagas.Settings = cfg.TaskQueue, workflows.Settings{CommitWait: cfg.CommitWait}
	opts.Sagas.Contacts = reads.Store
	return desk.New(tc, reads.Catalog, opts)
}

func dialTemporal(cfg temporalclient.Config, logger *zap.Logger, dial func(client.Options) (client.Client, error)) (client.Client, error) {
	opts, err := cfg.Options()
	if err != nil {
		return nil, err
	}
	opts.Logger = zaplog.New(logger.WithOptions(zap.IncreaseLevel(zap.WarnLevel)))
	tc, err := dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect temporal at %s: %w", cfg.Address, err)
	}
	return tc, nil
}

// APIConfig is the agent API's settings beside the connections it shares.
type APIConfig struct {
	ClientConfig
	// KeysFile holds the hashed API keys; it is re-read when it changes.
	KeysFile string
	// Open serves without keys (the dev stack's -open-api only).
	Open   bool
	Limits ratelimit.Limits
	// MaxBody is the largest request body, in bytes.
	MaxBody int64
	// The voice platforms' secrets, for their signed tool calls.
	RetellKey, VapiSecret, VapiHMACSecret string
	// MaxInFlight bounds the calls that start or ask Temporal (the booking
	// routes, every voice tool) this API runs at once; past the limit in
	// force, which admission sets at or below it from AdmitTarget, a call
	// is answered at once, not sent (503, retryable). Zero admits every
	// call.
	MaxInFlight int
	// AdmitTarget is the p95 of admitted calls admission aims at.
	AdmitTarget time.Duration
	// FindsPerKeyHour is find_booking's attempts an hour per API key
	// (voice.Config.FindsPerKeyHour); 0 is the default.
	FindsPerKeyHour int
	// HandoffsPerKeyHour is request_human's hand-offs an hour per API key
	// (voice.Config.HandoffsPerKeyHour); 0 is the default.
	HandoffsPerKeyHour int
	// CallerIDHeader names the routes fronted by a platform that sets
	// X-Caller-Number itself (voice.Config.CallerIDHeader); none by
	// default.
	CallerIDHeader []string
}

// DefaultAPIConfig is the defaults, with what the environment sets.
func DefaultAPIConfig() APIConfig {
	return APIConfig{ClientConfig: DefaultClientConfig(), KeysFile: os.Getenv("API_KEYS_FILE"), Limits: ratelimit.DefaultLimits(),
		MaxBody: 64 << 10, RetellKey: os.Getenv("RETELL_API_KEY"), VapiSecret: os.Getenv("VAPI_SECRET"),
		VapiHMACSecret: os.Getenv("VAPI_HMAC_SECRET"), MaxInFlight: 64, AdmitTarget: admission.DefaultTarget}
}

// Validate reports every bad setting at once.
func (c APIConfig) Validate() error {
	errs := []error{c.ClientConfig.Validate()}
	if c.KeysFile == "" && !c.Open {
		errs = append(errs, errors.New("no API keys: set -keys or API_KEYS_FILE to a keys file (make one with 'starter keys new')"))
	}
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("no database: set -database-url or DATABASE_URL (the API seals contacts under keys the store keeps)"))
	}
	if c.MaxBody <= 0 {
		errs = append(errs, fmt.Errorf("max-body must be positive, got %d", c.MaxBody))
	}
	if c.FindsPerKeyHour < 0 || c.HandoffsPerKeyHour < 0 {
		errs = append(errs, fmt.Errorf("finds-per-key-hour and handoffs-per-key-hour must be 0 (the default) or more, got %d and %d",
			c.FindsPerKeyHour, c.HandoffsPerKeyHour))
	}
	if c.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("max-in-flight must be 0 (no bound) or more, got %d", c.MaxInFlight))
	}
	// A rate with no burst would refuse every call.
	if c.Limits.PerSecond > 0 && c.Limits.Burst < 1 || c.Limits.AgencyPerSecond > 0 && c.Limits.AgencyBurst < 1 {
		errs = append(errs, fmt.Errorf("rate-burst and agency-rate-burst must be 1 or more where their rate is set, got %d and %d",
			c.Limits.Burst, c.Limits.AgencyBurst))
	}
	for _, r := range c.CallerIDHeader {
		if !slices.Contains(voice.CallerIDRoutes, r) {
			errs = append(errs, fmt.Errorf("caller-id-header: %q is no route with a caller ID header (want %s)", r, strings.Join(voice.CallerIDRoutes, ", ")))
		}
	}
	if c.AdmitTarget < 50*time.Millisecond || c.AdmitTarget > c.CommitWait {
		errs = append(errs, fmt.Errorf("admit-target must be between 50ms and the commit wait (%s), got %s", c.CommitWait, c.AdmitTarget))
	}
	return errors.Join(errs...)
}

// API is the agent API, assembled once for `starter serve` and the dev
// stack alike: its Temporal client, its own store connections, the saga
// client and the handler.
type API struct {
	handler http.Handler
	tc      client.Client
	reads   *Reads
	names   *speech.Names
}

// NewAPI assembles the API of cfg; its call latencies go to scope. It
// dials Temporal at once, so a wrong address stops it at start-up.
func NewAPI(ctx context.Context, cfg APIConfig, logger *zap.Logger, scope tally.Scope) (*API, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var keys *apikey.Keyring
	if !cfg.Open {
		var err error
		if keys, err = apikey.LoadKeyring(cfg.KeysFile); err != nil {
			return nil, err
		}
	}
	tc, err := dialTemporal(cfg.Temporal, logger, client.Dial)
	if err != nil {
		return nil, err
	}
	reads, err := OpenReads(ctx, cfg.DatabaseURL, cfg.Mirrors, logger)
	if err != nil {
		tc.Close()
		return nil, err
	}
	inFlight, limit := scope.Gauge("booking_calls_in_flight"), scope.Gauge("admission_limit")
	admit := admission.New(admission.Config{Target: cfg.AdmitTarget, Max: cfg.MaxInFlight, Min: 4,
		OnInFlight: func(n int) { inFlight.Update(float64(n)) }, OnLimit: func(n int) { limit.Update(float64(n)) }})
	sc := newDesk(tc, cfg.ClientConfig, reads, desk.Options{OnPending: NotePending(reads.Store, logger), Sagas: sagaclient.Options{Log: logger}})
	names := speech.NewNames(reads.Store)
	if err := names.Refresh(ctx); err != nil {
		// The lines say "the property" until the next refresh.
		logger.Warn("display names not read at start", zap.Error(err))
	}
	if v, err := reads.Store.LatestZoneRules(ctx); err == nil && v != "" && v != localtime.Version() {
		// A rolling deploy: bookings whose local time the two releases
		// read as different instants are refused until both agree.
		logger.Warn("zone rules differ from the workers'", zap.String("api", localtime.Version()), zap.String("workers", v))
	}
	limits := cfg.Limits
	h := Edge(sc, EdgeConfig{
		Config: edge.Config{Keys: keys, Limits: &limits, Log: logger, StoreZoneRules: reads.Store.LatestZoneRules, Agencies: reads.Store,
			Ready: []health.Check{{Name: "temporal", Fn: sc.Healthy}, {Name: "store", Fn: reads.Ping}},
			Settings: edge.Settings{MaxBody: cfg.MaxBody, Metrics: scope, Catalogue: reads.Catalog, Names: names, Bookings: reads.Store,
				Admission: admit}},
		REST: api.Config{Contacts: reads.Store, Webhooks: reads.Store, Egress: cfg.Mirrors.Egress(), Agencies: reads.Store,
			PlatformSecrets: reads.Store, MirrorAccounts: AccountsWriter(reads.Store, reads.Catalog.Accounts), CheckAccount: cfg.Mirrors.CheckAccount,
			Profiles: reads.Store, Links: reads.Store},
		Tools: voice.Config{RetellKey: cfg.RetellKey, VapiSecret: cfg.VapiSecret, VapiHMACSecret: cfg.VapiHMACSecret,
			FindBudget: reads.Store, Contacts: reads.Store, CallerIDHeader: cfg.CallerIDHeader, FindsPerKeyHour: cfg.FindsPerKeyHour,
			HandoffsPerKeyHour: cfg.HandoffsPerKeyHour, Secrets: reads.Store},
		Texts: texts.Config{Replies: reads.Store, Signed: cfg.Mirrors.TextsSigned(reads.Catalog.Accounts), Profiles: reads.Store,
			PublicURL: cfg.Mirrors.PublicURL},
		Page: callerpage.Config{Links: reads.Store, Profiles: reads.Store},
	})
	return &API{handler: h, tc: tc, reads: reads, names: names}, nil
}

// namesEvery is how often an API re-reads the display names: a name
// another process wrote reaches this one's lines within it.
const namesEvery = 30 * time.Second

// keepNames refreshes the display names every namesEvery until ctx ends;
// a failed refresh keeps the names it had.
func keepNames(ctx context.Context, names *speech.Names, logger *zap.Logger) {
	t := time.NewTicker(namesEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rctx, cancel := context.WithTimeout(ctx, namesEvery)
			if err := names.Refresh(rctx); err != nil {
				logger.Warn("display names not refreshed; the lines keep the names they had", zap.Error(err))
			}
			cancel()
		}
	}
}

// NotePending tells the store of a call answered pending_reconciliation:
// its decision goes out as booking.settled, and reconciliation sends it
// again if Temporal never got it. It runs beside the answer, never before
// it: the store being slow or down is often why the answer was pending,
// and a voice caller can't wait on it. A note that can't be written in ten
// seconds is logged and lost; the agent backend then learns the outcome by
// asking, and sends the call again with its key, as the receipt tells it.
func NotePending(st *store.Store, logger *zap.Logger) func(context.Context, booking.PendingCall) {
	return func(ctx context.Context, call booking.PendingCall) {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := st.NotePending(ctx, call); err != nil {
				logger.Warn("pending answer not noted", zap.String("request_key", call.RequestKey), zap.String("op", string(call.Op)), zap.Error(err))
			}
		}()
	}
}

// Serve answers on ln until ctx ends, then drains for up to 10 s: it takes
// no new calls and answers those in flight before it returns.
func (a *API) Serve(ctx context.Context, ln net.Listener, logger *zap.Logger) error {
	go keepNames(ctx, a.names, logger)
	srv := httpserve.Server(a.handler)
	// Serve returns as soon as Shutdown begins; the caller must wait until
	// Shutdown has answered the calls in flight, or they get an EOF.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	logger.Info("agent API listening", zap.String("addr", ln.Addr().String()), zap.String("zone_rules", localtime.Version()))
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-drained
	logger.Info("agent API stopped; calls in flight were answered")
	return nil
}

// Close closes the API's connections; call it after Serve returned.
func (a *API) Close() {
	a.reads.Close()
	a.tc.Close()
}
