// Command starter is the agent-facing side of bookingsaga and its
// operators' CLI. "serve" runs the agent edge (the REST API with the voice
// tools for Retell, Vapi and MCP mounted on it, as app assembles
// it); "migrate" brings the schema up as its owner and "retention" applies
// the data's periods as the retention role, each a process of its own in
// a deployment. From a terminal: book, status, cancel and reschedule through the
// sagas; availability, bookings and policy from the store; ops (attention,
// timelines, restores, flags, hand-offs, reconciliation); keys (API keys),
// codec (the payload codec server), demo (a tour against the dev stack),
// soak (open-loop load) and probe. The saga commands need Temporal; the
// store's reads and serve need the database too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app"
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
  ops ...      operator's tools: attention, timeline, reconcile, restore, release-lost,
               called-back (or resolve), outcome, reassign
  demo         drive a running dev stack like a voice agent and show the outcome
  soak         open-loop load on a running dev stack at fixed arrival rates
  codec        serve the payload codec to operators (Web UI, Temporal CLI)
  migrate      bring the store's schema to this build's, as its owner (MIGRATE_DATABASE_URL), once
  retention    the bookings' and event log's retention, as the retention role (RETENTION_DATABASE_URL), hourly
  probe URL    exit 0 if URL answers 200 (container health checks)
  keys new     make an API key: prints the secret once, stores its hash
  keys payload make the payload encryption keys file (or add a key to rotate to)

run "starter <command> -h" for a command's flags.
`

// devPayloadKeys is where the dev stack, in its default data dir, keeps
// the keys its payloads are encrypted with.
const devPayloadKeys = ".bookingsaga/payload-keys.json"

// devKeysDefault lets a terminal command run beside `go run ./worker -dev`
// read what its workers encrypt without being told where the keys are. A
// server (serve) takes no keys by accident: it would encrypt what workers
// configured otherwise could not read.
func devKeysDefault(cfg *app.ClientConfig, cmd string) {
	if cfg.Temporal.PayloadKeysFile != "" || cmd == "serve" {
		return
	}
	if _, err := os.Stat(devPayloadKeys); err == nil {
		cfg.Temporal.PayloadKeysFile = devPayloadKeys
	}
}

// devStoreDefault lets a command that reads the store find the dev stack's
// store beside it (following where its cluster lives) when no database is
// set; a server never picks one up by accident.
func devStoreDefault(cfg *app.ClientConfig, cmd string) {
	if cfg.DatabaseURL != "" || cmd == "serve" {
		return
	}
	if url, err := app.DevDatabaseURL(app.DefaultConfig().DataDir); err == nil {
		cfg.DatabaseURL = url
	}
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
	cfg := app.DefaultClientConfig()
	fs := flag.NewFlagSet("starter", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	cfg.Temporal.Register(fs)
	fs.StringVar(&cfg.TaskQueue, "task-queue", cfg.TaskQueue, "the workers' task queue")
	fs.DurationVar(&cfg.CommitWait, "commit-wait", cfg.CommitWait, "how long a commit waits before answering pending_reconciliation")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the booking store, read directly by availability, status and ops (env DATABASE_URL; default: the dev stack's in ./.bookingsaga, when it runs)")
	cfg.Mirrors.Register(fs)
	agencyID := fs.String("agency", "", "the agency the command acts for, by id (default: the default agency)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	devKeysDefault(&cfg, fs.Arg(0))
	devStoreDefault(&cfg, fs.Arg(0))
	if err := cfg.Validate(); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("a command is required")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd { // these need no saga client
	case "demo":
		return runDemo(ctx, cfg, rest, out)
	case "probe":
		return probe(ctx, rest)
	case "keys":
		return keys(rest, out)
	case "codec":
		return codec(ctx, cfg, rest)
	case "policy":
		return policy(ctx, cfg, rest, out)
	case "migrate":
		return migrateCmd(ctx, cfg, rest, out)
	}
	logger, err := zap.NewProduction()
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger, rest)
	case "retention":
		return retention(ctx, rest, logger)
	}
	conn, err := app.Connect(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	if *agencyID != "" {
		if ctx, err = conn.ActFor(ctx, *agencyID); err != nil {
			return fmt.Errorf("-agency %s: %w", *agencyID, err)
		}
	}
	err = command(ctx, conn, cmd, rest, out)
	if errors.Is(err, app.ErrNoStore) {
		return fmt.Errorf("%s reads the store: set -database-url or DATABASE_URL, or start the dev stack here (go run ./worker -dev)", cmd)
	}
	return err
}

// command runs one of the commands that talk to Temporal.
func command(ctx context.Context, conn *app.Conn, cmd string, rest []string, out io.Writer) error {
	switch cmd {
	case "book", "status", "cancel", "reschedule", "ops":
		d, err := conn.Desk()
		if err != nil {
			return err
		}
		if cmd == "ops" {
			return ops(ctx, d, rest, out)
		}
		return terminal(ctx, d, cmd, rest, out)
	case "availability", "bookings":
		cat, err := conn.Catalogue()
		if err != nil {
			return err
		}
		if cmd == "availability" {
			return availability(ctx, cat, rest, out)
		}
		return bookings(ctx, cat, rest, out)
	case "soak":
		return runSoak(ctx, conn.Temporal, rest, out)
	}
	return fmt.Errorf("unknown command %q (run starter -h)", cmd)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
