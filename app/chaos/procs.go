package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
)

// proc is one child process of a run: a worker, the API or the Temporal
// server. Its output goes to a log file in the run's directory.
type proc struct {
	name, logPath string
	cmd           *exec.Cmd
	done          chan struct{}
}

func startProc(dir, name string, argv []string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	// Its own process group: a signal meant for the run (a Ctrl-C) is not
	// delivered to it twice, and kill reaches only it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// ready waits for probe to pass, failing early, with the end of the
// process's log, if the process exits first.
func (p *proc) ready(ctx context.Context, probe func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := probe(ctx)
	if err != nil && !p.running() {
		log, _ := os.ReadFile(p.logPath)
		return fmt.Errorf("%s exited before it was ready: %s", p.name, tail(string(log), 1500))
	}
	return err
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// kill is kill -9.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// interrupt is a deploy's SIGINT: the process drains and exits by itself.
func (p *proc) interrupt(grace time.Duration) error {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		p.kill()
		return fmt.Errorf("%s did not stop within %s of SIGINT", p.name, grace)
	}
}

// waitHTTP polls url until it answers 200 or ctx ends.
func waitHTTP(ctx context.Context, url string) error {
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", url, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitTemporal polls the frontend's health check until it answers.
func waitTemporal(ctx context.Context, addr string) error {
	for {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: zaplog.New(zap.NewNop())})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for temporal at %s: %w", addr, errors.Join(err, context.Cause(ctx)))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TemporalRole, as a binary's first argument followed by a directory, a
// frontend address and, for PostgreSQL persistence, the cluster's socket
// directory and admin connection string, makes it the run's Temporal
// server (ServeRole).
const TemporalRole = "chaos-temporal"

// ServeRole serves Temporal and exits when args ask for TemporalRole; it
// returns at once otherwise. The chaos command and its test call it first
// thing, so each can re-run itself as the Temporal process.
func ServeRole(args []string) {
	if (len(args) != 3 && len(args) != 5) || args[0] != TemporalRole {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var pg *devstack.PostgresTemporal
	if len(args) == 5 {
		pg = &devstack.PostgresTemporal{SocketDir: args[3], Admin: args[4]}
	}
	logger, err := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))
	if err == nil {
		err = ServeTemporal(ctx, args[1], args[2], pg, logger)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos temporal:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeTemporal is the Temporal server's process in a run: the dev stack's
// server, on PostgreSQL when pg is set (the workers then register the
// namespace) or on a SQLite file in dir, until ctx ends. A run starts it
// as its own child (the chaos command and its test re-run themselves for
// it), so that it can be killed and restarted like any other process.
func ServeTemporal(ctx context.Context, dir, frontend string, pg *devstack.PostgresTemporal, logger *zap.Logger) error {
	t, err := devstack.StartTemporal(devstack.TemporalOptions{DataDir: dir, Frontend: frontend, Namespace: Namespace, Log: logger, Postgres: pg})
	if err != nil {
		return err
	}
	<-ctx.Done()
	t.Stop()
	return nil
}
