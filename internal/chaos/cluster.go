// Package chaos runs bookingsaga's processes for real, breaks them while
// callers book, and checks what every caller heard against the store and
// the mirrors, as Jepsen does: the worker and the agent API are the built
// binaries, PostgreSQL and the Temporal server each run as their own
// process, and the calendar and CRM fakes misbehave at random.
package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/crm/crmtest"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
)

// Namespace is the run's Temporal namespace.
const Namespace = "default"

const crmToken = "chaos-crm-token"

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

	mu       sync.Mutex
	pg       *pgserver.Server
	temporal *proc
	workers  map[string]*proc
	api      *proc

	dbURL, temporalAddr, apiAddr string
	// apiKey is the callers' agent key.
	apiKey              string
	workerHealth        map[string]string
	calendar            *gcaltest.Calendar
	graph               *graphtest.Graph
	crm                 *crmtest.CRM
	calendarURL, crmURL string
	graphURL            string
	servers             []*http.Server
	pool                *pgxpool.Pool
}

func newCluster(dir string, bins Binaries) (*cluster, error) {
	c := &cluster{dir: dir, bins: bins, workers: map[string]*proc{}, workerHealth: map[string]string{},
		calendar: gcaltest.NewCalendar(), graph: graphtest.NewGraph(graphApp), crm: crmtest.NewCRM(crmToken)}
	for _, r := range resources() {
		if r.CalendarProvider == booking.ProviderMicrosoft {
			c.graph.AddMailbox(r.CalendarID)
		}
	}
	addrs, err := freeAddrs(5)
	if err != nil {
		return nil, err
	}
	c.temporalAddr, c.apiAddr = addrs[0], addrs[1]
	secret, key, err := apikey.NewKey("chaos-callers", apikey.ScopeAgent)
	if err != nil {
		return nil, err
	}
	if err := apikey.SaveKey(filepath.Join(dir, "api-keys.json"), key, true); err != nil {
		return nil, err
	}
	c.apiKey = secret
	c.workerHealth["a"], c.workerHealth["b"] = addrs[2], addrs[3]
	for _, fake := range []struct {
		h   http.Handler
		url *string
	}{{c.calendar, &c.calendarURL}, {c.graph, &c.graphURL}, {c.crm, &c.crmURL}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		srv := httpserve.Server(fake.h)
		go func() { _ = srv.Serve(ln) }()
		c.servers = append(c.servers, srv)
		*fake.url = "http://" + ln.Addr().String()
	}
	return c, nil
}

// graphApp is the fake Microsoft 365 tenant's app the workers sign in as.
var graphApp = graphtest.GraphApp{TenantID: "chaos-tenant", ClientID: "chaos-app", ClientSecret: "chaos-graph-secret"}

func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs, nil
}

// startPostgres starts (or restarts) the cluster on its data directory.
func (c *cluster) startPostgres(ctx context.Context) error {
	pg, err := pgserver.Start(ctx, pgserver.Options{Dir: filepath.Join(c.dir, "postgres"), Durable: true})
	if err != nil {
		return fmt.Errorf("start postgresql: %w", err)
	}
	c.mu.Lock()
	c.pg, c.dbURL = pg, pg.ConnString("postgres")
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
	p, err := startProc(c.dir, "temporal", append(append([]string{}, c.bins.Temporal...), data, c.temporalAddr))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.temporal = p
	c.mu.Unlock()
	return p.ready(ctx, func(ctx context.Context) error { return waitTemporal(ctx, c.temporalAddr) })
}

// startWorker starts worker slot ("a" or "b") from the built binary, in
// production mode: no embedded stack, only the flags a deployment sets.
func (c *cluster) startWorker(ctx context.Context, slot string) error {
	argv := []string{c.bins.Worker, "-database-url", c.dbURL, "-temporal-address", c.temporalAddr, "-namespace", Namespace,
		"-health-listen", c.workerHealth[slot], "-reconcile-every", "0", "-shutdown-timeout", "10s",
		"-calendar-endpoint", c.calendarURL + "/calendar/v3/", "-calendar-no-auth", "-calendar-timeout", "2s",
		"-microsoft-tenant", graphApp.TenantID, "-microsoft-client-id", graphApp.ClientID, "-microsoft-client-secret", graphApp.ClientSecret,
		"-graph-endpoint", c.graphURL + "/v1.0", "-microsoft-login", c.graphURL,
		"-crm-url", c.crmURL, "-crm-token", crmToken, "-crm-timeout", "2s", "-log-level", "warn"}
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

// startAPI starts the agent API as the starter binary serves it.
func (c *cluster) startAPI(ctx context.Context) error {
	argv := []string{c.bins.Starter, "-temporal-address", c.temporalAddr, "-namespace", Namespace, "serve", "-listen", c.apiAddr, "-database-url", c.dbURL,
		"-keys", filepath.Join(c.dir, "api-keys.json"), "-rate-limit", "0"} // faults are under test here, not the limiter
	p, err := startProc(c.dir, "api", argv)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.api = p
	c.mu.Unlock()
	return p.ready(ctx, func(ctx context.Context) error { return waitHTTP(ctx, "http://"+c.apiAddr+"/readyz") })
}

// ensureUp starts whatever is not running, as an operator's supervisor
// would after the faults end.
func (c *cluster) ensureUp(ctx context.Context) error {
	c.mu.Lock()
	pgUp, temporalUp, apiUp := c.pg != nil && isOpen(c.pg.Exited()), c.temporal != nil && c.temporal.running(), c.api != nil && c.api.running()
	workerUp := c.workers["a"] != nil && c.workers["a"].running()
	c.mu.Unlock()
	steps := []struct {
		up    bool
		start func(context.Context) error
	}{
		{pgUp, c.startPostgres}, {temporalUp, c.startTemporal},
		{workerUp, func(ctx context.Context) error { return c.startWorker(ctx, "a") }}, {apiUp, c.startAPI},
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
	procs := []*proc{c.api}
	for _, w := range c.workers {
		procs = append(procs, w)
	}
	for _, p := range append(procs, c.temporal) {
		if p != nil && p.running() {
			_ = p.interrupt(15 * time.Second)
		}
	}
	if c.pg != nil {
		c.pg.Stop()
	}
	c.calendar.Release()
	c.crm.Release()
	for _, s := range c.servers {
		_ = s.Close()
	}
}

func (c *cluster) apiURL() string { return "http://" + c.apiAddr }
