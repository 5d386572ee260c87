package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/app"
)

// migrateCmd is starter migrate: the schema brought to this build's
// version, as the schema's owner, once.
func migrateCmd(ctx context.Context, cfg app.ClientConfig, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	url := os.Getenv("MIGRATE_DATABASE_URL")
	if url == "" {
		url = cfg.DatabaseURL
	}
	dbURL := fs.String("database-url", url, "the schema owner's login (env MIGRATE_DATABASE_URL, else DATABASE_URL)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *dbURL == "" {
		return fmt.Errorf("migrate needs the schema owner's login: set -database-url or MIGRATE_DATABASE_URL")
	}
	from, to, err := app.Migrate(ctx, *dbURL)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "schema at version %d (was %d)\n", to, from)
	return err
}

// retention is starter retention: the event log's and the bookings'
// retention, as the retention role, every hour (or once).
func retention(ctx context.Context, args []string, logger *zap.Logger) error {
	cfg := app.DefaultRetentionConfig()
	fs := flag.NewFlagSet("retention", flag.ContinueOnError)
	fs.StringVar(&cfg.DatabaseURL, "database-url", os.Getenv("RETENTION_DATABASE_URL"), "the retention role's login (env RETENTION_DATABASE_URL)")
	fs.DurationVar(&cfg.BookingRetention, "booking-retention", cfg.BookingRetention, "as the worker's: how long after the viewing a booking keeps its request key")
	fs.DurationVar(&cfg.EventRetention, "event-retention", cfg.EventRetention, "as the worker's: how long the event log keeps a row")
	fs.DurationVar(&cfg.Every, "every", cfg.Every, "how often a pass runs; 0 runs one and exits (for cron)")
	fs.IntVar(&cfg.Limit, "limit", cfg.Limit, "keys and events one transaction retires")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	return app.RunRetention(ctx, cfg, logger)
}
