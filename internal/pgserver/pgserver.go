// Package pgserver runs a private PostgreSQL cluster from the system's server
// binaries: the throwaway cluster behind the tests and the dev stack's
// database. It listens on a Unix socket only, so it never clashes with, or is
// reachable beside, another server on the machine.
package pgserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/internal/syncbuf"
)

// ErrNoBinaries means no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("postgresql server binaries (initdb, postgres) not found on PATH or under /usr/lib/postgresql/*/bin: install them, e.g. apt-get install postgresql")

// Options say where the cluster lives and how durable it is.
type Options struct {
	// Dir holds the data directory and the socket. It is created if missing;
	// an existing cluster in it is reused.
	Dir string
	// Durable keeps fsync on. Tests turn it off: their clusters are thrown away.
	Durable bool
	// MaxConnections defaults to 200.
	MaxConnections int
	// Preload names the modules the server loads at start
	// (shared_preload_libraries): pg_stat_statements for the soak's
	// statement accounting.
	Preload []string
}

// Server is a running cluster.
type Server struct {
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	// output collects the server's output for error messages.
	output *syncbuf.Buffer
}

// Start initialises the cluster if needed and starts it, returning once it
// accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := clusterDir(opts.Dir, cred)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	dataDir := filepath.Join(opts.Dir, "data")
	if err := prepareDir(opts.Dir, cred); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initdb(ctx, bin, dataDir, cred); err != nil {
			return nil, err
		}
	}
	s := &Server{dir: opts.Dir, exited: make(chan struct{}), output: &syncbuf.Buffer{Max: 64 << 10}}
	if err := s.run(bin, dataDir, cred, opts); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// ConnString names database db on this cluster as the postgres superuser.
func (s *Server) ConnString(db string) string { return connString(s.dir, db, "postgres") }

// ConnStringAs names database db on this cluster as user, whom the
// cluster trusts on its socket as it trusts the superuser.
func (s *Server) ConnStringAs(db, user string) string { return connString(s.dir, db, user) }

// SocketDir is the directory of the cluster's unix socket: the host to
// connect to.
func (s *Server) SocketDir() string { return s.dir }

func connString(host, db, user string) string {
	return fmt.Sprintf("host=%s user=%s dbname=%s sslmode=disable", host, user, db)
}

// Exited is closed when the server process has ended, stopped or not.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Crash stops the cluster as `pg_ctl stop -m immediate` does (SIGQUIT):
// no checkpoint, children killed, crash recovery on the next start.
func (s *Server) Crash() {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	<-s.exited
}

// Signal sends sig to the postmaster and to each of its children, which
// call setsid and so are out of its process group: SIGSTOP freezes the
// whole cluster as a stalled machine would, SIGCONT thaws it.
func (s *Server) Signal(sig syscall.Signal) error {
	pid := s.cmd.Process.Pid
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return err
	}
	pids := []int{pid}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its ")".
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			pids = append(pids, child)
		}
	}
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal postgresql process %d: %w", p, err)
		}
	}
	return nil
}

// Remove stops the cluster and deletes its directory, wherever it lives:
// a throwaway cluster relocated under clustersRoot is gone with its dir.
func (s *Server) Remove() error {
	s.Stop()
	return os.RemoveAll(s.dir)
}

// Stop shuts the cluster down with a fast shutdown (rolls back open
// transactions, flushes, exits) and waits for the process to go.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *Server) run(bin, dataDir string, cred *syscall.Credential, opts Options) error {
	maxConn := opts.MaxConnections
	if maxConn == 0 {
		maxConn = 200
	}
	args := []string{"-D", dataDir, "-k", s.dir, "-c", "listen_addresses=",
		"-c", "max_connections=" + strconv.Itoa(maxConn)}
	if !opts.Durable {
		args = append(args, "-F", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	if len(opts.Preload) > 0 {
		args = append(args, "-c", "shared_preload_libraries="+strings.Join(opts.Preload, ","))
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.Stdout = s.output
	s.cmd.Stderr = s.output
	// Pdeathsig takes the server down with us if we die without Stop.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	return nil
}

// waitReady polls until the server accepts a connection: postgres has no
// readiness signal short of trying.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		conn, err := pgx.Connect(ctx, s.ConnString("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited (%v): %s", s.waitErr, s.output.String())
		case <-ctx.Done():
			return fmt.Errorf("postgres not ready: %w (last: %v): %s", ctx.Err(), err, s.output.String())
		case <-time.After(delay):
		}
	}
}

func initdb(ctx context.Context, bin, dataDir string, cred *syscall.Credential) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dataDir, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w: %s", dataDir, err, out)
	}
	return nil
}

// clustersRoot holds the clusters of data dirs the postgres user can't
// reach; its parent (/var/lib) is world-traversable on every Debian system.
const clustersRoot = "/var/lib/bookingsaga/postgres"

// LocationFile, in a data dir, names the directory elsewhere that holds its
// cluster.
const LocationFile = "cluster-location"

// clusterDir is where dir's cluster lives. Usually dir itself; but when we
// are root and the postgres user can't walk down to dir (a clone under a
// 0700 home), a directory of its own under clustersRoot, whose path is
// written into dir so that a restart finds the same cluster. Its name is
// the hash of dir's path (whose clusters these are) and a random id: a
// wiped dir has lost the id, so it gets a new cluster and never adopts the
// old one, which is removed unless it is running.
func clusterDir(dir string, cred *syscall.Credential) (string, error) {
	if cred == nil {
		return dir, nil
	}
	pointer := filepath.Join(dir, LocationFile)
	if b, err := os.ReadFile(pointer); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if reachable(abs, cred.Uid) == nil {
		return dir, nil
	}
	sum := sha256.Sum256([]byte(abs))
	owner := filepath.Join(clustersRoot, hex.EncodeToString(sum[:6]))
	id := make([]byte, 6)
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	home := owner + "-" + hex.EncodeToString(id)
	if err := os.MkdirAll(clustersRoot, 0o755); err != nil {
		return "", fmt.Errorf("postgres dir %s: %w", clustersRoot, err)
	}
	removeOrphans(owner)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	if err := os.WriteFile(pointer, []byte(home+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	return home, nil
}

// removeOrphans deletes the clusters an earlier dir at the same path left
// (owner is the path's hash; before ids, it was the whole name), except a
// running one: their data dir is gone, so nothing can reach them again.
func removeOrphans(owner string) {
	old, _ := filepath.Glob(owner + "-*")
	for _, c := range append(old, owner) {
		if _, err := os.Stat(filepath.Join(c, "data", "postmaster.pid")); err == nil {
			continue
		}
		_ = os.RemoveAll(c)
	}
}

// Running returns the connection string of database db on the cluster
// that serves dir (following its location) when that cluster is up.
func Running(dir, db string) (string, error) {
	host := dir
	if b, err := os.ReadFile(filepath.Join(dir, LocationFile)); err == nil {
		host = strings.TrimSpace(string(b))
	}
	host, err := filepath.Abs(host)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(host, ".s.PGSQL.5432")); err != nil {
		return "", fmt.Errorf("no postgresql runs for %s: %w", dir, err)
	}
	return connString(host, db, "postgres"), nil
}

// credential drops to the postgres user when we are root, because postgres
// refuses to run as root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func prepareDir(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	if cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	return reachable(dir, cred.Uid)
}

// reachable checks that the postgres user can walk down to dir: a root-only
// parent (a 0700 home or temp dir) would make initdb fail with a bare
// "permission denied".
func reachable(dir string, uid uint32) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("postgres dir %s: %w", dir, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm()&0o001 == 0 && !(ok && st.Uid == uid) {
			return fmt.Errorf("postgres dir %s: the postgres user cannot enter %s (mode %s): "+
				"PostgreSQL runs as postgres when we are root, so make it traversable (chmod o+x %s) or use a data dir elsewhere",
				dir, p, fi.Mode().Perm(), p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// findBinaries looks on PATH first, then at the newest Debian-style install.
func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Pid is the postmaster's process id; its backends are its children.
func (s *Server) Pid() int { return s.cmd.Process.Pid }
