package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buildAt builds pkg as the repository had it at rev (a tag of a release),
// from a clean export of that revision, and returns the binary's path.
func buildAt(t *testing.T, rev, pkg string) string {
	t.Helper()
	src := t.TempDir()
	archive := exec.Command("git", "-C", "../..", "archive", "--format=tar", rev)
	extract := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	require.NoError(t, err)
	extract.Stdin = pipe
	var stderr strings.Builder
	archive.Stderr = &stderr
	require.NoError(t, extract.Start())
	require.NoError(t, archive.Run(), "export %s (the tests need the repository's git history and tags): %s", rev, stderr.String())
	require.NoError(t, extract.Wait())
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = src
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build %s at %s: %s", pkg, rev, out)
	return bin
}

// process is a binary the test runs and stops.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
}

func startBinary(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{t: t, cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
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
