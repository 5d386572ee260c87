// Package chaos runs bookingsaga's processes for real, breaks them while
// callers book, and checks what every caller heard against the store and
// the mirrors, as Jepsen does: the worker and the agent API are the built
// binaries, PostgreSQL and the Temporal server each run as their own
// process, and the calendar and CRM fakes misbehave at random.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
)

// Namespace is the run's Temporal namespace.
const Namespace = "default"

const crmToken = "chaos-crm-token"

// hubspotToken is the HubSpot private app's; the workers read it from a
// file, as a deployment does.
const hubspotToken = "pat-na1-chaos"

// Binaries are what a run starts.
type Binaries struct {
	// Worker and Starter are the built ./worker and ./starter.
	Worker, Starter string
	// Temporal is the command line of a process that calls ServeTemporal
	// with the directory and frontend address appended.
	Temporal []string
}

// cluster is a run's processes and fakes.
type cluster struct {
	dir  string
	bins Binaries

	// temporalStore is where Temporal keeps its state (Options).
	temporalStore string

	mu sync.Mutex
	pg *pgserver.Server
	// temporalPG is Temporal's own PostgreSQL cluster, apart from the
	// store's, so that the store's faults stay the store's.
	temporalPG *pgserver.Server
	temporal   *proc
	// Two workers and two APIs, slots "a" and "b", as a deployment scales
	// out: a fault takes one of each down while the others serve.
	workers, apis map[string]*proc

	// dbURL is the store's database as the workers and APIs log in to
	// it, as the store's owner, which row-level security holds to one
	// agency at a time; adminURL is it as the superuser, for the checks,
	// which read every agency's rows, and PostgreSQL's tools.
	dbURL, adminURL, temporalAddr string
	// preload are the modules the store's PostgreSQL loads: a serve's
	// pg_stat_statements, for the soak's statement accounting.
	preload []string
	// agencies are the run's agencies: the default one, and
	// secondAgency when Options.SecondAgency.
	agencies []string
	// apiKey is the callers' agent key, of the default agency; keys are
	// each agency's, by id.
	apiKey string
	keys   map[string]string
	// adminKeys are each agency's admin key, by id.
	adminKeys map[string]string
	// floodKey is the flooding key (Options.Flooders).
	floodKey               string
	workerHealth, apiAddrs map[string]string
	// workerPprof, when set (a serve), is each worker's profile address.
	workerPprof map[string]string
	// *fakes are the deployment's accounts, the default agency's; own
	// are each other agency's, by id.
	*fakes
	own  map[string]*fakes
	pool *pgxpool.Pool
}

func newCluster(dir string, bins Binaries, temporalStore string, second bool) (*cluster, error) {
	c := &cluster{dir: dir, bins: bins, temporalStore: temporalStore, workers: map[string]*proc{}, apis: map[string]*proc{},
		agencies: []string{agency.Default.ID}, keys: map[string]string{}, adminKeys: map[string]string{},
		workerHealth: map[string]string{}, apiAddrs: map[string]string{}, own: map[string]*fakes{}}
	var err error
	if c.fakes, err = startFakes(credentials{graph: graphApp, hubspotToken: hubspotToken, twilioAccount: twilioAccount,
		twilioToken: twilioToken}); err != nil {
		return nil, err
	}
	if second {
		c.agencies = append(c.agencies, secondAgency)
		if c.own[secondAgency], err = startFakes(lyonAccounts); err != nil {
			c.fakes.stop()
			return nil, err
		}
	}
	for _, a := range c.agencies {
		for _, r := range resources(a) {
			if r.CalendarProvider == booking.ProviderMicrosoft {
				c.accountsOf(a).graph.AddMailbox(r.CalendarID)
			}
		}
		for _, props := range agencyContacts {
			c.accountsOf(a).hubspot.AddContact(props)
		}
	}
	addrs, err := freeAddrs(5)
	if err != nil {
		return nil, err
	}
	c.temporalAddr = addrs[0]
	c.apiAddrs["a"], c.apiAddrs["b"] = addrs[1], addrs[2]
	// Each agency's agent key, for its callers, and admin key, for its
	// webhook endpoint; the first key written makes the file.
	fresh := true
	for _, a := range c.agencies {
		for _, scope := range []apikey.Scope{apikey.ScopeAgent, apikey.ScopeAdmin} {
			secret, key, err := apikey.NewKey(fmt.Sprintf("chaos-%s-%s", a, scope), scope)
			if err != nil {
				return nil, err
			}
			if a != agency.Default.ID {
				key.Agency = a
			}
			if err := apikey.SaveKey(filepath.Join(dir, "api-keys.json"), key, fresh); err != nil {
				return nil, err
			}
			fresh = false
			if scope == apikey.ScopeAgent {
				c.keys[a] = secret
			} else {
				c.adminKeys[a] = secret
			}
		}
	}
	c.apiKey = c.keys[agency.Default.ID]
	// A second agent key, for the flood (Options.Flooders).
	floodSecret, floodKey, err := apikey.NewKey("chaos-flood", apikey.ScopeAgent)
	if err != nil {
		return nil, err
	}
	if err := apikey.SaveKey(filepath.Join(dir, "api-keys.json"), floodKey, false); err != nil {
		return nil, err
	}
	c.floodKey = floodSecret
	c.workerHealth["a"], c.workerHealth["b"] = addrs[3], addrs[4]
	return c, os.WriteFile(filepath.Join(dir, "hubspot-token"), []byte(hubspotToken), 0o600)
}

// The fake Twilio account the workers text through.
const (
	twilioAccount = "ACchaos000000000000000000000000000"
	twilioToken   = "chaostwiliotoken000000000000000000"
)

// graphApp is the fake Microsoft 365 tenant's app the workers sign in as.
var graphApp = graphtest.GraphApp{TenantID: "chaos-tenant", ClientID: "chaos-app", ClientSecret: "chaos-graph-secret"}

// lyonAccounts are the second agency's own: another tenant's app,
// another HubSpot app, another Twilio account.
var lyonAccounts = credentials{graph: graphtest.GraphApp{TenantID: "lyon-tenant", ClientID: "lyon-app", ClientSecret: "lyon-graph-secret"},
	hubspotToken: "pat-eu1-chaos-lyon", twilioAccount: "AClyon00000000000000000000000000000", twilioToken: "lyontwiliotoken0000000000000000000"}

// accountsOf are agency id's accounts: its own, else the deployment's.
func (c *cluster) accountsOf(id string) *fakes {
	if f, ok := c.own[id]; ok {
		return f
	}
	return c.fakes
}

// freeAddrs are n loopback addresses free now, for processes that bind
// them later, on ports below the kernel's ephemeral range (32768 and up
// on Linux): a port the kernel hands meanwhile to another process's
// listener on port 0, or to a connection, is never one of them.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for tries := 0; len(addrs) < n && tries < 1000; tries++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err != nil {
			continue // taken: another
		}
		defer ln.Close() // held until all are picked, so none is picked twice
		addrs = append(addrs, ln.Addr().String())
	}
	if len(addrs) < n {
		return nil, fmt.Errorf("no %d free ports below the ephemeral range", n)
	}
	return addrs, nil
}

// storeDatabase is the store's database in the run's cluster.
const storeDatabase = "bookingsaga"

// startPostgres starts (or restarts) the cluster on its data directory.
func (c *cluster) startPostgres(ctx context.Context) error {
	pg, err := pgserver.Start(ctx, pgserver.Options{Dir: filepath.Join(c.dir, "postgres"), Durable: true, Preload: c.preload})
	if err != nil {
		return fmt.Errorf("start postgresql: %w", err)
	}
	owner, err := devstack.CreateDatabase(ctx, pg.ConnString("postgres"), storeDatabase, devstack.StoreOwner)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.pg, c.dbURL, c.adminURL = pg, pg.ConnStringAs(storeDatabase, owner), pg.ConnString(storeDatabase)
	c.mu.Unlock()
	return nil
}

func (c *cluster) crashPostgres() {
	c.mu.Lock()
	pg := c.pg
	c.mu.Unlock()
	pg.Crash()
}

func (c *cluster) signalPostgres(sig syscall.Signal) error {
	c.mu.Lock()
	pg := c.pg
	c.mu.Unlock()
	return pg.Signal(sig)
}

func (c *cluster) startTemporal(ctx context.Context) error {
	data := filepath.Join(c.dir, "temporal")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	argv := append(append([]string{}, c.bins.Temporal...), data, c.temporalAddr)
	if c.temporalStore == devstack.StorePostgres {
		if err := c.startTemporalPostgres(ctx); err != nil {
			return err
		}
		argv = append(argv, c.temporalPG.SocketDir(), c.temporalPG.ConnString("postgres"))
	}
	p, err := startProc(c.dir, "temporal", argv)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.temporal = p
	c.mu.Unlock()
	return p.ready(ctx, func(ctx context.Context) error { return waitTemporal(ctx, c.temporalAddr) })
}

// startTemporalPostgres starts Temporal's PostgreSQL cluster once; no
// fault touches it.
func (c *cluster) startTemporalPostgres(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.temporalPG != nil {
		return nil
	}
	pg, err := pgserver.Start(ctx, pgserver.Options{Dir: filepath.Join(c.dir, "temporal-postgres"), Durable: true})
	if err != nil {
		return fmt.Errorf("start temporal's postgresql: %w", err)
	}
	c.temporalPG = pg
	return nil
}

// startWorker starts worker slot ("a" or "b") from the built binary, in
// production mode: no embedded stack, only the flags a deployment sets.
func (c *cluster) startWorker(ctx context.Context, slot string) error {
	argv := []string{c.bins.Worker, "-database-url", c.dbURL, "-temporal-address", c.temporalAddr, "-namespace", Namespace,
		"-health-listen", c.workerHealth[slot], "-reconcile-every", "24h", "-shutdown-timeout", "10s",
		"-calendar-endpoint", c.calendarURL + "/calendar/v3/", "-calendar-no-auth", "-calendar-timeout", "2s",
		"-microsoft-tenant", graphApp.TenantID, "-microsoft-client-id", graphApp.ClientID, "-microsoft-client-secret", graphApp.ClientSecret,
		"-graph-endpoint", c.graphURL + "/v1.0", "-microsoft-login", c.graphURL,
		"-crm-url", c.crmURL, "-crm-token", crmToken, "-crm-timeout", "2s", "-log-level", "warn",
		"-hubspot-url", c.hubspotURL, "-hubspot-token-file", filepath.Join(c.dir, "hubspot-token"),
		"-twilio-account-sid", twilioAccount, "-twilio-auth-token", twilioToken, "-sms-from", agencyNumber, "-twilio-endpoint", c.smsURL,
		"-sms-quiet-from", "0s", "-sms-quiet-to", "0s", "-smtp-addr", c.smtpAddr, "-smtp-tls", "none", "-mail-from", "visites@chaos.test",
		"-webhook-allow-loopback", "-public-url", "http://" + c.apiAddrs["a"]}
	if addr := c.workerPprof[slot]; addr != "" {
		argv = append(argv, "-pprof-listen", addr)
	}
	p, err := startProc(c.dir, "worker-"+slot, argv)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.workers[slot] = p
	c.mu.Unlock()
	return p.ready(ctx, func(ctx context.Context) error { return waitHTTP(ctx, "http://"+c.workerHealth[slot]+"/healthz") })
}

func (c *cluster) worker(slot string) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workers[slot]
}

// startAPI starts API slot ("a" or "b") as the starter binary serves it.
func (c *cluster) startAPI(ctx context.Context, slot string) error {
	argv := []string{c.bins.Starter, "-temporal-address", c.temporalAddr, "-namespace", Namespace, "serve", "-listen", c.apiAddrs[slot], "-database-url", c.dbURL,
		"-keys", filepath.Join(c.dir, "api-keys.json"), "-rate-limit", "0", // faults are under test here, not the limiter
		// The agencies' webhook receivers are on loopback; the second
		// agency's calendars, read through its own account, are fakes.
		"-webhook-allow-loopback", "-calendar-no-auth",
		// The default agency's Twilio account, to check its callers' replies.
		"-twilio-account-sid", twilioAccount, "-twilio-auth-token", twilioToken, "-sms-from", agencyNumber,
		"-public-url", "http://" + c.apiAddrs["a"]}
	p, err := startProc(c.dir, "api-"+slot, argv)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apis[slot] = p
	c.mu.Unlock()
	return p.ready(ctx, func(ctx context.Context) error { return waitHTTP(ctx, "http://"+c.apiAddrs[slot]+"/readyz") })
}

func (c *cluster) api(slot string) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apis[slot]
}

// startPair starts worker and API slot, side by side.
func (c *cluster) startPair(ctx context.Context, slot string) error {
	var wg sync.WaitGroup
	var errWorker, errAPI error
	wg.Go(func() { errWorker = c.startWorker(ctx, slot) })
	wg.Go(func() { errAPI = c.startAPI(ctx, slot) })
	wg.Wait()
	return errors.Join(errWorker, errAPI)
}

// ensureUp starts whatever is not running, as an operator's supervisor
// would after the faults end.
func (c *cluster) ensureUp(ctx context.Context) error {
	type step struct {
		up    bool
		start func(context.Context) error
	}
	c.mu.Lock()
	steps := []step{{c.pg != nil && isOpen(c.pg.Exited()), c.startPostgres}, {c.temporal != nil && c.temporal.running(), c.startTemporal}}
	c.mu.Unlock()
	for _, slot := range slots {
		w, a := c.worker(slot), c.api(slot)
		steps = append(steps, step{w != nil && w.running(), func(ctx context.Context) error { return c.startWorker(ctx, slot) }},
			step{a != nil && a.running(), func(ctx context.Context) error { return c.startAPI(ctx, slot) }})
	}
	for _, s := range steps {
		if !s.up {
			if err := s.start(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// slots name the two workers and the two APIs.
var slots = []string{"a", "b"}

func isOpen(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// stop ends every process and fake.
func (c *cluster) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool != nil {
		c.pool.Close()
	}
	var procs []*proc
	for _, slot := range slots {
		procs = append(procs, c.apis[slot], c.workers[slot])
	}
	for _, p := range append(procs, c.temporal) {
		if p != nil && p.running() {
			_ = p.interrupt(15 * time.Second)
		}
	}
	for _, pg := range []*pgserver.Server{c.pg, c.temporalPG} {
		if pg != nil {
			pg.Stop()
		}
	}
	c.fakes.stop()
	for _, f := range c.own {
		f.stop()
	}
}

// apiURLs are the two APIs, the one a caller uses first first.
func (c *cluster) apiURLs(first int) []string {
	urls := []string{"http://" + c.apiAddrs["a"], "http://" + c.apiAddrs["b"]}
	if first%2 == 1 {
		urls[0], urls[1] = urls[1], urls[0]
	}
	return urls
}
