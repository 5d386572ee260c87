package systemtest

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/agency/agencyheader"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/crm/crmtest"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// TestMain runs every test of the binary with host zone data that
// disagrees with the build's: ZONEINFO names a copy of tzdata 2025b,
// where British Columbia is still on UTC−8 in winter. Were any part of
// the service to read the host's zone data, the Vancouver tests would see
// 18:00Z where the build's rules say 17:00Z.
func TestMain(m *testing.M) {
	host, err := filepath.Abs(filepath.Join("..", "..", "internal", "localtime", "testdata", "host-2025b"))
	if err == nil {
		err = os.Setenv("ZONEINFO", host)
	}
	if err != nil {
		panic(err)
	}
	code := pgtest.Run(m)
	if dir, ok := builtWorker.dir(); ok {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// One in-process Temporal server, with the dev stack's dynamic Config,
// serves every test in the binary; tests keep apart through their own task
// queues and request keys.
var temporalServer = sync.OnceValue(func() *temporaltest.TestServer {
	dc := devstack.DynamicConfig()
	// A deleted workflow goes once its close task is acknowledged, which
	// is every 30 s by default; tests that delete sagas (standing in for
	// retention) wait for that.
	dc[dynamicconfig.TransferProcessorUpdateAckInterval.Key()] = 200 * time.Millisecond
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: zaplog.New(zap.NewNop()),
		ContextPropagators: []workflow.ContextPropagator{agencyheader.Propagator{}}}),
		temporaltest.WithBaseServerOptions(temporal.WithDynamicConfigClient(dc),
			temporal.WithCustomMetricsHandler(metrics.NewTallyMetricsHandler(metrics.ClientConfig{}, serverMetrics()))))
	if err := app.EnsureSearchAttributes(context.Background(), ts.GetDefaultClient(), ts.GetDefaultNamespace()); err != nil {
		panic(err)
	}
	return ts
})

// serverMetrics is what the test server records: BenchmarkHistoryPerBooking
// counts its persistence calls.
var serverMetrics = sync.OnceValue(func() tally.TestScope { return tally.NewTestScope("", nil) })

const policyVersion = "showing-policy-1"

// The fake Microsoft 365 tenant's app, and the agent mailbox in it.
const (
	graphTenant  = "0c1d2e3f-0000-4000-8000-00000000aaaa"
	graphClient  = "1d2e3f4a-0000-4000-8000-00000000bbbb"
	graphSecret  = "graph-secret"
	agentMailbox = "agent-ms@agency.example"
)

type fixture struct {
	t        testing.TB
	ctx      context.Context
	pool     *pgxpool.Pool
	acts     *activities.Activities
	catalog  *catalog.Catalog
	calendar *gcaltest.Calendar
	graph    *graphtest.Graph
	crm      *crmtest.CRM
	client   client.Client
	queue    string
	settings workflows.Settings
	// calendarURL and crmURL are where the fakes listen.
	calendarURL, crmURL string
	// mirrors are the deployment's settings that agencies' own accounts
	// are built and checked with.
	mirrors app.Mirrors
	// worker is the one setup started.
	worker worker.Worker
	// publicLn, when set, is where the next serveAPI serves: a test that
	// must know the API's URL before its worker starts (the callers'
	// links) listens first.
	publicLn net.Listener
}

// setup gives a test its own database, fake calendar and CRM, task queue
// and worker on the shared Temporal server.
func setup(t testing.TB, opts ...worker.Options) *fixture {
	t.Helper()
	return setupOn(t, pgtest.New(t), opts...)
}

// setupOn is setup over a database of the test's own choosing.
func setupOn(t testing.TB, pool *pgxpool.Pool, opts ...worker.Options) *fixture {
	t.Helper()
	f := fixtureOn(t, pool)
	f.seed()
	var o worker.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	f.worker = f.startWorker(o)
	return f
}

// fixtureOn is the fixture's fakes and activities over pool, with nothing
// written to the store and no worker yet.
func fixtureOn(t testing.TB, pool *pgxpool.Pool) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	f := &fixture{t: t, ctx: ctx, pool: pool, calendar: gcaltest.NewCalendar(), crm: crmtest.NewCRM("crm-token"),
		client: temporalServer().GetDefaultClient(), queue: "q-" + strings.ReplaceAll(t.Name(), "/", "-"),
		settings: workflows.Settings{MirrorAttemptTimeout: 3 * time.Second}}
	f.graph = graphtest.NewGraph(graphtest.GraphApp{TenantID: graphTenant, ClientID: graphClient, ClientSecret: graphSecret}, agentMailbox)
	calSrv, crmSrv, graphSrv := httptest.NewServer(f.calendar), httptest.NewServer(f.crm), httptest.NewServer(f.graph)
	f.calendarURL, f.crmURL = calSrv.URL, crmSrv.URL
	t.Cleanup(func() { f.calendar.Release(); calSrv.Close() })
	t.Cleanup(func() { f.crm.Release(); crmSrv.Close() })
	t.Cleanup(func() { f.graph.Release(); graphSrv.Close() })
	st := store.New(f.pool, store.Config{})
	// The deployment's accounts, both calendar providers and the generic
	// CRM, built as the worker builds them; each agency's own over the
	// same roots. Receivers are local test servers, as with the dev stack.
	f.mirrors = app.Mirrors{CalendarEndpoint: f.calendarURL + "/calendar/v3/", CalendarNoAuth: true, CalendarTimeout: 2 * time.Second,
		Microsoft: app.Microsoft{TenantID: graphTenant, ClientID: graphClient, ClientSecret: graphSecret,
			GraphEndpoint: graphSrv.URL + "/v1.0", LoginEndpoint: graphSrv.URL},
		CRMBaseURL: f.crmURL, CRMToken: "crm-token", CRMTimeout: 2 * time.Second, HubSpot: app.HubSpot{PerTenSeconds: 100},
		WebhookLoopback: true}
	set, err := f.mirrors.Connect(ctx, false)
	require.NoError(t, err)
	cal, crms := set.Calendar, set.CRM
	book := f.mirrors.Accounts(st, false)
	f.acts = &activities.Activities{Store: st, Calendar: cal, CRM: crms, Accounts: book, Temporal: f.client,
		Egress: &egress.Guard{AllowLoopback: true}, Resend: sagaclient.New(f.client, sagaclient.Options{TaskQueue: f.queue})}
	f.catalog = &catalog.Catalog{Store: st, Calendar: cal, CRM: crms, Accounts: book}
	return f
}

// seed writes the policy and the two resources every test books.
func (f *fixture) seed() { f.seedFor(f.ctx) }

// seedFor writes them for the agency ctx acts for.
func (f *fixture) seedFor(ctx context.Context) {
	f.t.Helper()
	require.NoError(f.t, f.acts.Store.SetPolicy(ctx, booking.Policy{Version: policyVersion, SlotMinutes: 30,
		OpensAt: 8 * time.Hour, ClosesAt: 20 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour}))
	for _, r := range []booking.Resource{
		{ID: "paris-11", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test"},
		{ID: "agent-00", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "agent-00@calendar.test"},
	} {
		require.NoError(f.t, f.acts.Store.UpsertResource(ctx, r))
	}
}

func (f *fixture) startWorker(o worker.Options) worker.Worker {
	w := worker.New(f.client, f.queue, o)
	app.Register(w, f.acts)
	require.NoError(f.t, w.Start())
	f.t.Cleanup(w.Stop)
	return w
}

// slot is a bookable start two days ahead at 10:00 in Paris.
func slot(t testing.TB, hour int) time.Time {
	t.Helper()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	d := time.Now().In(loc).AddDate(0, 0, 2)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, loc).UTC()
}

func commitRequest(start time.Time) booking.CommitRequest {
	return booking.CommitRequest{ExpectedPolicyVersion: policyVersion, Intent: booking.Intent{
		PropertyID: "paris-11", AgentID: "agent-00", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}}
}

func (f *fixture) commit(key string, req booking.CommitRequest) receipt.Receipt {
	f.t.Helper()
	r, err := f.saga().Commit(f.ctx, key, req)
	require.NoError(f.t, err)
	return r
}

func (f *fixture) bookings() int {
	f.t.Helper()
	var n int
	require.NoError(f.t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking").Scan(&n))
	return n
}

func (f *fixture) state(key string) workflows.BookingState {
	f.t.Helper()
	v, err := f.client.QueryWorkflow(f.ctx, key, "", booking.QueryState)
	require.NoError(f.t, err)
	var st workflows.BookingState
	require.NoError(f.t, v.Get(&st))
	return st
}

// synced reports whether the saga's mirrors are written. A query can stall
// while a stopped worker's sticky queue times out, so each try is bounded
// and a failed try only means "not yet".
func (f *fixture) synced(key string) bool {
	ctx, cancel := context.WithTimeout(f.ctx, 2*time.Second)
	defer cancel()
	v, err := f.client.QueryWorkflow(ctx, key, "", booking.QueryState)
	if err != nil {
		return false
	}
	var st workflows.BookingState
	return v.Get(&st) == nil && st.CalendarSynced && st.CRMSynced
}

// eventually waits for cond, polling the system under test.
func (f *fixture) eventually(cond func() bool, what string) {
	f.t.Helper()
	require.Eventually(f.t, cond, 30*time.Second, 50*time.Millisecond, what)
}

func (f *fixture) liveEvents(calendarID string) int {
	n := 0
	for _, ev := range f.calendar.Events(calendarID) {
		if ev.Status != "cancelled" {
			n++
		}
	}
	return n
}

// sagas is the desk over the fixture's worker and catalogue, as the API
// has it.
func (f *fixture) sagas() *desk.Desk {
	return desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: f.queue, Settings: f.settings}})
}

// saga is the public saga client over the fixture's worker, as an agent
// backend of its own has it, with a margin that lets a call on a loaded
// machine wait for the saga's own answer.
func (f *fixture) saga() *sagaclient.Client {
	return sagaclient.New(f.client, sagaclient.Options{TaskQueue: f.queue, Settings: f.settings, Margin: time.Minute})
}
