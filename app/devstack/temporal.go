// Package devstack runs the embedded default stack in one process tree:
// a Temporal server persisted to SQLite (WAL) with its Web UI, PostgreSQL
// from the system's binaries, and the fake calendar and CRM.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
)

// TemporalOptions place the embedded Temporal server.
type TemporalOptions struct {
	// DataDir holds temporal.db; it survives restarts.
	DataDir string
	// Frontend and UI are host:port; UI empty means no Web UI.
	Frontend, UI string
	// CodecEndpoint is the codec server the Web UI decodes payloads with.
	CodecEndpoint string
	Namespace     string
	// SearchAttributes are registered with the namespace when it is made.
	SearchAttributes map[string]enums.IndexedValueType
	Log              *zap.Logger
	// Postgres, when set, keeps the server's persistence and visibility in
	// that PostgreSQL cluster instead of SQLite in DataDir; the worker then
	// registers the namespace and its search attributes itself.
	Postgres *PostgresTemporal
}

// Temporal is a running embedded server and its UI.
type Temporal struct {
	server temporal.Server
	ui     *uiserver.Server
}

// StartTemporal starts the server, creating its SQLite file and the
// namespace on first use.
func StartTemporal(o TemporalOptions) (*Temporal, error) {
	host, port, err := splitHostPort(o.Frontend)
	if err != nil {
		return nil, fmt.Errorf("temporal frontend %q: %w", o.Frontend, err)
	}
	if err := portsFree(o.Frontend, o.UI); err != nil {
		return nil, err
	}
	ports, err := freePorts(host, 4) // frontend HTTP, history, matching, worker
	if err != nil {
		return nil, err
	}
	conf, err := persistenceConfig(o)
	if err != nil {
		return nil, err
	}
	serverConfig(conf, host, port, ports)
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(staticHosts(host, port, ports)),
		temporal.WithLogger(serverlog.NewZapLogger(o.Log.WithOptions(zap.IncreaseLevel(zap.ErrorLevel)))),
		temporal.WithDynamicConfigClient(DynamicConfig()),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	t := &Temporal{server: srv}
	if o.UI != "" {
		uiHost, uiPort, err := splitHostPort(o.UI)
		if err != nil {
			srv.Stop()
			return nil, fmt.Errorf("temporal ui %q: %w", o.UI, err)
		}
		t.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			Host: uiHost, Port: uiPort, TemporalGRPCAddress: o.Frontend, EnableUI: true,
			CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true, DisableNewsFetch: true,
			Codec: uiconfig.Codec{Endpoint: o.CodecEndpoint},
		}))
		go func() {
			if err := t.ui.Start(); err != nil {
				o.Log.Error("temporal ui stopped", zap.Error(err))
			}
		}()
	}
	return t, nil
}

// Stop stops the UI, then the server.
func (t *Temporal) Stop() {
	if t.ui != nil {
		t.ui.Stop()
	}
	t.server.Stop()
}

func sqliteConfig(file string, o TemporalOptions) (*config.SQL, error) {
	// One connection: SQLite has one writer, and several connections meet
	// SQLITE_BUSY on write upgrades even with WAL. WAL with synchronous=FULL
	// (2) keeps every committed history write across a crash.
	conf := &config.SQL{PluginName: sqliteplugin.PluginName, DatabaseName: file, MaxConns: 1, MaxIdleConns: 1,
		ConnectAttributes: map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": "2"}}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		if err := sqliteschema.SetupSchema(conf); err != nil {
			return nil, fmt.Errorf("temporal schema in %s: %w", file, err)
		}
	}
	return conf, createNamespace(conf, o)
}

// createNamespace registers the namespace, with its search attributes, in
// the server's store, if it is not there.
func createNamespace(conf *config.SQL, o TemporalOptions) error {
	ns, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", o.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return fmt.Errorf("namespace %s: %w", o.Namespace, err)
	}
	return nil
}

// DynamicConfig is the embedded server's dynamic configuration. The tests'
// in-process server uses it too, so what they measure is what runs.
func DynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Search attributes added at runtime are visible at once.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// A history shard reads its transfer queue at most 20 times a second
		// by default. A cluster of hundreds of shards never notices; a
		// single-shard server turns it into up to 50 ms before each workflow
		// task is dispatched, on the path of every tool call (BENCHMARKS.md).
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): 1000,
		// Tasks are dispatched fairly by their fairness key, which every
		// saga's start sets to its agency (visibility.Fairness): an agency
		// with a backlog waits behind its own tasks, not another's. Off by
		// default in v1.32; docker-compose.yml's server turns it on too.
		dynamicconfig.MatchingEnableFairness.Key(): true,
		// history.timerProcessorMaxTimeShift stays at its 1 s: a timer set
		// now fires no sooner than that, so the saga's 1 ms timer before
		// the mirrors takes a second. 50 ms cut mirror lag tenfold, and made
		// the answers slower under load: a saga's tool call went from 1.31x
		// to 1.57x a no-op's at 8 callers (BENCHMARKS.md). The caller's
		// answer comes first.
	}
}

// persistenceConfig is the server's stores: SQLite in the data dir (one
// shard: one writer), or the two PostgreSQL databases.
func persistenceConfig(o TemporalOptions) (*config.Config, error) {
	var conf config.Config
	if o.Postgres != nil {
		persistence, visibility, err := postgresStores(context.Background(), *o.Postgres)
		if err != nil {
			return nil, err
		}
		conf.Persistence.DefaultStore, conf.Persistence.VisibilityStore = "default", "visibility"
		conf.Persistence.NumHistoryShards = temporalShards
		conf.Persistence.DataStores = map[string]config.DataStore{"default": {SQL: persistence}, "visibility": {SQL: visibility}}
		// The namespace is written before the server starts, as for
		// SQLite: one registered through a running server is unseen until
		// its namespace cache refreshes. The helper is the SQLite schema
		// package's, but works through any SQL plugin.
		return &conf, createNamespace(persistence, o)
	}
	sqlConf, err := sqliteConfig(filepath.Join(o.DataDir, "temporal.db"), o)
	if err != nil {
		return nil, err
	}
	conf.Persistence.DefaultStore, conf.Persistence.VisibilityStore = "sqlite", "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	return &conf, nil
}

func serverConfig(conf *config.Config, host string, port int, ports []int) {
	conf.Global.Membership.MaxJoinDuration = 30_000_000_000
	conf.Global.Membership.BroadcastAddress = host
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10, MasterClusterName: "active", CurrentClusterName: "active",
		ClusterInformation: map[string]cluster.ClusterInformation{"active": {
			Enabled: true, InitialFailoverVersion: 1,
			RPCAddress:  net.JoinHostPort(host, strconv.Itoa(port)),
			HTTPAddress: net.JoinHostPort(host, strconv.Itoa(ports[0])),
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	service := func(grpc, http int) config.Service {
		var s config.Service
		s.RPC.GRPCPort, s.RPC.HTTPPort, s.RPC.BindOnIP = grpc, http, host
		return s
	}
	conf.Services = map[string]config.Service{
		"frontend": service(port, ports[0]),
		"history":  service(ports[1], 0),
		"matching": service(ports[2], 0),
		"worker":   service(ports[3], 0),
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = net.JoinHostPort(host, strconv.Itoa(port))
}

func staticHosts(host string, port int, ports []int) map[primitives.ServiceName]static.Hosts {
	at := func(p int) static.Hosts { return static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(p))) }
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: at(port),
		primitives.HistoryService:  at(ports[1]),
		primitives.MatchingService: at(ports[2]),
		primitives.WorkerService:   at(ports[3]),
	}
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return host, port, nil
}

// portsFree checks each address can be listened on, so a clash is one
// clear line before anything starts.
func portsFree(addrs ...string) error {
	for _, a := range addrs {
		if a == "" {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return fmt.Errorf("%s is in use (is another stack running?); stop it or pick another port with the flags: %w", a, err)
		}
		_ = ln.Close()
	}
	return nil
}

// freePorts asks the kernel for n unused ports on host.
func freePorts(host string, n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	var out []int
	for range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
