// Command worker runs the bookingsaga Temporal worker: the booking saga
// and the other workflows (conversations, reconciliation, caller
// messages, releases, outcomes, CRM mirrors) and their activities against
// PostgreSQL, the calendars (Google, Microsoft), the CRM (HubSpot), texts
// (Twilio) and e-mail (SMTP), and the Schedule that reconciles them.
// With -dev it brings up the embedded stack instead. main is wiring only.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app"
)

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	logger, err := zap.NewProduction(zap.IncreaseLevel(cfg.LogLevel))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: logger:", err)
		os.Exit(1)
	}
	defer func() { _ = logger.Sync() }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := app.Run
	if cfg.Dev {
		start = app.RunDev
	}
	if err := start(ctx, cfg, logger); err != nil {
		// One plain line: it usually says what to fix (a port in use, no
		// PostgreSQL binaries, an unwritable data dir).
		_ = logger.Sync()
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}
