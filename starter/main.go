// Command starter is the agent-facing side of bookingsaga: "serve" runs the
// HTTP API (with the Retell and Vapi tool endpoints); book, status, cancel
// and reschedule do the same from a terminal. The terminal commands only
// need Temporal; serve also reaches the store, for the contact keys.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // zone rules are part of the binary

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/mirrors"
	"github.com/bookingsaga/bookingsaga/internal/temporalclient"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

const usage = `usage: starter [flags] <command> [command flags]

commands:
  serve        run the HTTP API
  book         book a slot and print the receipt
  availability free starts of a property and an agent on a local day
  policy       the booking policy in force (reads the store: DATABASE_URL)
  bookings     a day's bookings from the store: -day 2026-12-08 -property X (DATABASE_URL)
  status KEY   print the receipt of a request key, or of a reference (BS-XXXX-XXXX)
  cancel KEY   cancel a booking
  reschedule KEY   move a booking to a new slot under a new key
  ops ...      operator's tools: attention, timeline, reconcile, resolve
  demo         drive a running dev stack like a voice agent and show the outcome
  soak         open-loop load on a running dev stack at fixed arrival rates
  codec        serve the payload codec to operators (Web UI, Temporal CLI)
  probe URL    exit 0 if URL answers 200 (container health checks)
  keys new     make an API key: prints the secret once, stores its hash

run "starter <command> -h" for a command's flags.
`

// devPayloadKeys is where the dev stack, in its default data dir, keeps
// the keys its payloads are encrypted with.
const devPayloadKeys = ".bookingsaga/payload-keys.json"

// devKeysDefault lets a terminal command run beside `go run ./worker -dev`
// read what its workers encrypt without being told where the keys are. A
// server (serve) takes no keys by accident: it would encrypt what workers
// configured otherwise could not read.
func devKeysDefault(cfg *config, cmd string) {
	if cfg.Temporal.PayloadKeysFile != "" || cmd == "serve" {
		return
	}
	if _, err := os.Stat(devPayloadKeys); err == nil {
		cfg.Temporal.PayloadKeysFile = devPayloadKeys
	}
}

// config is the connection every command shares.
type config struct {
	Temporal   temporalclient.Config
	TaskQueue  string
	CommitWait time.Duration
	// DatabaseURL lets a command read the store directly: availability,
	// what the store decided on a key, the ops reads. serve requires it.
	DatabaseURL string
	// Mirrors are the calendar and CRM, read for availability's free/busy
	// and for a booking's timeline.
	Mirrors mirrors.Config
}

func (c config) validate() error {
	if c.TaskQueue == "" {
		return errors.New("task queue must not be empty")
	}
	if err := c.Temporal.Validate(); err != nil {
		return err
	}
	if c.CommitWait <= 0 || c.CommitWait > time.Minute {
		return fmt.Errorf("commit-wait must be between 0 and 1m, got %s", c.CommitWait)
	}
	return c.Mirrors.Validate()
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg := config{Temporal: temporalclient.FromEnv(), TaskQueue: booking.TaskQueue, CommitWait: 3 * time.Second,
		DatabaseURL: os.Getenv("DATABASE_URL"), Mirrors: mirrors.FromEnv()}
	fs := flag.NewFlagSet("starter", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	cfg.Temporal.Register(fs)
	fs.StringVar(&cfg.TaskQueue, "task-queue", cfg.TaskQueue, "the workers' task queue")
	fs.DurationVar(&cfg.CommitWait, "commit-wait", cfg.CommitWait, "how long a commit waits before answering pending_reconciliation")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the booking store, read directly by availability, status and ops (env DATABASE_URL)")
	cfg.Mirrors.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	devKeysDefault(&cfg, fs.Arg(0))
	if err := cfg.validate(); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("a command is required")
	}
	switch fs.Arg(0) { // HTTP only: these need no Temporal client
	case "demo":
		return runDemo(ctx, fs.Args()[1:], out)
	case "probe":
		return probe(ctx, fs.Args()[1:])
	case "keys":
		return keys(fs.Args()[1:], out)
	case "codec":
		return codec(ctx, cfg, fs.Args()[1:])
	case "policy":
		return policy(ctx, cfg, fs.Args()[1:], out)
	}
	logger, err := zap.NewProduction()
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	opts, err := cfg.Temporal.Options()
	if err != nil {
		return err
	}
	opts.Logger = zaplog.New(logger.WithOptions(zap.IncreaseLevel(zap.WarnLevel)))
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	// The server dials at once, so a wrong address stops it at start-up;
	// commands dial on their first call, so reads of the store work
	// while Temporal is down.
	dial := client.NewLazyClient
	if cmd == "serve" {
		dial = client.Dial
	}
	tc, err := dial(opts)
	if err != nil {
		return fmt.Errorf("connect temporal at %s: %w", cfg.Temporal.Address, err)
	}
	defer tc.Close()
	sco := sagaclient.Options{TaskQueue: cfg.TaskQueue, Settings: workflows.Settings{CommitWait: cfg.CommitWait}}
	if cmd == "serve" {
		return serve(ctx, tc, cfg, sco, logger, rest)
	}
	if cfg.DatabaseURL != "" {
		conn, err := openStore(ctx, cfg.DatabaseURL, cfg.Mirrors, logger)
		if err != nil {
			return err
		}
		defer conn.close()
		sco.Catalog, sco.Contacts = conn.catalog, conn.store
	}
	sc := sagaclient.New(tc, sco)
	err = command(ctx, tc, sc, cmd, rest, out)
	if errors.Is(err, sagaclient.ErrNoCatalog) {
		return fmt.Errorf("%s reads the store: set -database-url or DATABASE_URL", cmd)
	}
	return err
}

// command runs one of the commands that talk to Temporal.
func command(ctx context.Context, tc client.Client, sc *sagaclient.Client, cmd string, rest []string, out io.Writer) error {
	switch cmd {
	case "book", "status", "cancel", "reschedule":
		return terminal(ctx, sc, cmd, rest, out)
	case "ops":
		return ops(ctx, sc, rest, out)
	case "availability":
		return availability(ctx, sc, rest, out)
	case "bookings":
		return bookings(ctx, sc, rest, out)
	case "soak":
		return runSoak(ctx, tc, rest, out)
	}
	return fmt.Errorf("unknown command %q (run starter -h)", cmd)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// probe is the containers' health check: the images have no shell or curl.
func probe(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("probe needs exactly one URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", args[0], res.StatusCode)
	}
	return nil
}
