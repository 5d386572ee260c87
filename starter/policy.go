package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/app"
)

// policy prints the booking policy in force, read from the store
// (DATABASE_URL): a read that starts no workflow.
func policy(ctx context.Context, cfg app.ClientConfig, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("policy", flag.ContinueOnError)
	dbURL := fs.String("database-url", cfg.DatabaseURL, "the booking store (env DATABASE_URL)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("policy reads the store: set -database-url or DATABASE_URL, or start the dev stack here (go run ./worker -dev)")
	}
	v, err := app.OpenReads(ctx, *dbURL, cfg.Mirrors, zap.NewNop())
	if err != nil {
		return err
	}
	defer v.Close()
	p, err := v.Store.CurrentPolicy(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, p)
	}
	_, err = fmt.Fprintf(out, "policy %s: %d-minute slots, bookable %s local time, buffers %d/%d min, holds %s, notice %s\n",
		p.Version, p.SlotMinutes, p.Hours(), p.DefaultBufferBeforeMinutes, p.DefaultBufferAfterMinutes, p.HoldTTL, p.MinNotice)
	return err
}
