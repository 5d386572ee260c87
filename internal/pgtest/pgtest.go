// Package pgtest gives each test its own freshly migrated database on a
// throwaway PostgreSQL cluster shared by the test binary, or on the server
// named by TEST_DATABASE_URL.
//
// A package using it calls Main from TestMain. There is no skip: without a
// server the tests fail and say what to install.
//
// Tests log in as Owner, which owns the schema and is no superuser, so
// the row-level security the service's logins meet holds in every test
// (the policies are forced on the owner too). The service's roles exist
// on the cluster for the tests that log in as them.
package pgtest

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/schema"
)

// cluster is per test binary: tests share the server, never a database.
var cluster struct {
	// admin connects to a maintenance database as a superuser, for
	// the roles and CREATE DATABASE.
	admin string
	// connFor connects to db as Owner.
	connFor  func(db string) string
	template string
	err      error
	seq      atomic.Int64
	mu       sync.Mutex // CREATE DATABASE from one template, one at a time
}

// Main starts the cluster, runs the tests, stops the cluster and exits.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with work of its own after the tests: it
// returns the tests' exit code.
func Run(m *testing.M) int {
	stop, err := start()
	cluster.err = err
	code := m.Run()
	stop()
	return code
}

func start() (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := func() {}
	if url := os.Getenv("TEST_DATABASE_URL"); url != "" {
		if _, err := pgx.ParseConfig(url); err != nil {
			return stop, fmt.Errorf("TEST_DATABASE_URL: %w", err)
		}
		cluster.admin = url
		cluster.connFor = func(db string) string { return replaceUser(replaceDB(url, db), Owner) }
	} else {
		dir, err := os.MkdirTemp("", "bookingsaga-pg-")
		if err != nil {
			return stop, err
		}
		srv, err := pgserver.Start(ctx, pgserver.Options{Dir: dir, MaxConnections: 300})
		if err != nil {
			_ = os.RemoveAll(dir)
			return stop, fmt.Errorf("start throwaway postgres (or set TEST_DATABASE_URL): %w", err)
		}
		stop = func() { _ = srv.Remove(); _ = os.RemoveAll(dir) }
		cluster.admin = srv.ConnString("postgres")
		cluster.connFor = func(db string) string { return srv.ConnStringAs(db, Owner) }
	}
	if err := makeRoles(ctx); err != nil {
		stop()
		return func() {}, err
	}
	cluster.template = fmt.Sprintf("bookingsaga_template_%d", os.Getpid())
	if err := createTemplate(ctx); err != nil {
		stop()
		return func() {}, err
	}
	// On a shared server the template outlives nothing; on our own cluster
	// the whole directory goes anyway.
	return func() {
		_ = exec(context.Background(), cluster.admin, "DROP DATABASE IF EXISTS "+cluster.template)
		stop()
	}, nil
}

// createTemplate migrates one database that every test's database copies,
// so each test pays for a file copy, not for the migrations.
func createTemplate(ctx context.Context) error {
	if err := exec(ctx, cluster.admin, "CREATE DATABASE "+cluster.template+" OWNER "+Owner); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, cluster.connFor(cluster.template))
	if err != nil {
		return fmt.Errorf("connect template: %w", err)
	}
	defer conn.Close(ctx)
	return schema.Migrate(ctx, conn)
}

// New returns a pool on a new database, dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := NewWithURL(t)
	return pool
}

// NewAtVersion returns a pool on a new database migrated only up to
// version: the schema of an earlier release, for a test of a rollout.
func NewAtVersion(t testing.TB, version int32) *pgxpool.Pool {
	t.Helper()
	pool, url := NewWithURL(t)
	ctx := context.Background()
	name := pool.Config().ConnConfig.Database + "_v" + fmt.Sprint(version)
	if _, err := pool.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// A pool made from a string, so that ConnString names this database.
	oldCfg, err := pgxpool.ParseConfig(replaceDB(url, name))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	oldCfg.ConnConfig.RuntimeParams["bookingsaga.agency"] = "1"
	old, err := pgxpool.NewWithConfig(ctx, oldCfg)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		old.Close()
		_, _ = pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	conn, err := old.Acquire(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Release()
	if err := schema.MigrateTo(ctx, conn.Conn(), version); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return old
}

// NewWithURL is New, also returning the database's connection string for
// code under test that opens its own pool.
func NewWithURL(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	if cluster.connFor == nil {
		t.Fatal("pgtest: call pgtest.Main(m) from TestMain")
	}
	if cluster.err != nil {
		t.Fatalf("pgtest: no database: %v", cluster.err)
	}
	ctx := context.Background()
	name := fmt.Sprintf("bookingsaga_test_%d_%d", os.Getpid(), cluster.seq.Add(1))
	cluster.mu.Lock()
	err := exec(ctx, cluster.admin, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s OWNER %s", name, cluster.template, Owner))
	cluster.mu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	url := cluster.connFor(name)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	cfg.MaxConns = 40
	// A test's own statements (fixtures, rogue writers) name the default
	// agency for the session, as the store names one per statement; the
	// service's logins name none but the store's.
	cfg.ConnConfig.RuntimeParams["bookingsaga.agency"] = "1"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		_ = exec(context.Background(), cluster.admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return pool, url
}

// Owner is the tests' login: it owns each test's database and schema, as
// the migrate job's login does in a deployment, and may also make
// databases and roles, which tests of migrations and grants do.
const Owner = "bookingsaga"

// Roles are the service's logins, which own nothing (docs/security.md).
var Roles = []string{"bookingsaga_worker", "bookingsaga_api", "bookingsaga_retention"}

// makeRoles makes the owner and the service's roles, once per cluster;
// on a shared server they may be there already, from another run.
func makeRoles(ctx context.Context) error {
	stmts := []string{"CREATE ROLE " + Owner + " LOGIN CREATEDB CREATEROLE"}
	for _, r := range Roles {
		stmts = append(stmts, "CREATE ROLE "+r+" LOGIN")
	}
	for _, s := range stmts {
		err := exec(ctx, cluster.admin, `DO $$ BEGIN `+s+`; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
		if err != nil {
			return fmt.Errorf("pgtest: roles: %w", err)
		}
	}
	return nil
}

func exec(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// replaceUser makes a postgres:// URL or a key=value string log in as
// user, with no password: the server must trust the tests' local logins.
func replaceUser(conn, user string) string {
	if u, err := neturl.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = neturl.User(user)
		return u.String()
	}
	return conn + " user=" + user
}

// replaceDB points a postgres:// URL or a key=value string at another database.
func replaceDB(url, db string) string {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		rest := url[strings.Index(url, "://")+3:]
		slash := strings.Index(rest, "/")
		query := ""
		if q := strings.Index(rest, "?"); q >= 0 {
			query = rest[q:]
			if slash < 0 || slash > q {
				slash = q
			}
		}
		if slash < 0 {
			slash = len(rest)
		}
		return url[:strings.Index(url, "://")+3] + rest[:slash] + "/" + db + query
	}
	return url + " dbname=" + db
}
