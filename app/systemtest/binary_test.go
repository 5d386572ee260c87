package systemtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/syncbuf"
)

// buildAt builds pkg from the kept source of a release and returns the
// binary's path. The source is kept in testdata/releases rather than read
// from the release's git tag, because a checkout (CI's among them) need not
// carry tags or history. Each archive was made when its release was tagged:
//
//	git archive --format=tar vX.Y.Z -- go.mod go.sum activities api booking \
//	  internal receipt sagaclient schema starter worker workflows \
//	  ':!*_test.go' ':!**/testdata/**' | gzip -9n > testdata/releases/vX.Y.Z.tar.gz
func buildAt(t *testing.T, release, pkg string) string {
	t.Helper()
	src := t.TempDir()
	archive := filepath.Join("testdata", "releases", release+".tar.gz")
	out, err := exec.Command("tar", "-xzf", archive, "-C", src).CombinedOutput()
	require.NoError(t, err, "unpack %s: %s", archive, out)
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = src
	out, err = build.CombinedOutput()
	require.NoError(t, err, "build %s of %s: %s", pkg, release, out)
	return bin
}

// process is a binary the test runs and stops.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	done   chan struct{}
}

func startBinary(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	return startCmd(t, exec.Command(bin, args...))
}

// startCmd starts cmd, stopped with the test.
func startCmd(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	bin := cmd.Path
	p := &process{t: t, cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s said: %s", bin, tail(p.stderr.String()))
		}
	})
	return p
}

// stop interrupts the process, as a deploy does, and waits for it to end.
func (p *process) stop() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(os.Interrupt))
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.t.Fatalf("%s did not stop: %s", p.cmd.Path, tail(p.stderr.String()))
	}
	require.True(p.t, p.cmd.ProcessState.Success() || p.cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled(),
		"%s: %s", p.cmd.Path, tail(p.stderr.String()))
}

// builtWorker is this build's worker binary, built once for the dev
// stack's tests as `go run ./worker` builds it: each of them running `go
// run` linked the binary (the Temporal server and UI in it) anew, several
// at once on CI's two cores.
var builtWorker onceBinary

type onceBinary struct {
	once sync.Once
	mu   sync.Mutex
	tmp  string // the directory made for it, once made
	path string
	err  error
}

// get builds the worker on first use and returns its path.
func (b *onceBinary) get(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "bs-worker-")
		bin := filepath.Join(dir, "worker")
		if err == nil {
			build := exec.Command("go", "build", "-o", bin, "./worker")
			build.Dir = filepath.Join("..", "..")
			if out, berr := build.CombinedOutput(); berr != nil {
				err = fmt.Errorf("build ./worker: %w: %s", berr, out)
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if dir != "" {
			b.tmp = dir
		}
		b.path, b.err = bin, err
	})
	require.NoError(t, b.err)
	return b.path
}

// dir is the directory made for the binary, if one was.
func (b *onceBinary) dir() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tmp, b.tmp != ""
}

// command runs the dev stack's worker with the stack's flags, from the
// module's root as the README's `go run ./worker -dev` does.
func (d *devStack) command() *exec.Cmd {
	cmd := exec.Command(builtWorker.get(d.t), d.args...)
	cmd.Dir = filepath.Join("..", "..")
	return cmd
}
