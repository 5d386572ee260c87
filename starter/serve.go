package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
)

// serve runs the HTTP API until ctx ends, then drains for up to 10 s.
func serve(ctx context.Context, cc app.ClientConfig, logger *zap.Logger, args []string) error {
	cfg := app.DefaultAPIConfig()
	cfg.ClientConfig = cc
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", envOr("API_LISTEN", "127.0.0.1:8080"), "address to serve on (env API_LISTEN)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "PostgreSQL: contacts are sealed under keys the store keeps, and reads (availability, status) start no workflow (env DATABASE_URL)")
	fs.StringVar(&cfg.KeysFile, "keys", cfg.KeysFile, "the API keys file, hashed keys as 'starter keys new' writes them; re-read when it changes (env API_KEYS_FILE)")
	fs.Float64Var(&cfg.Limits.PerSecond, "rate-limit", cfg.Limits.PerSecond, "calls a second per key (a voice tool call is one); a booking call repeated is free, a read is not; 0 is no limit")
	fs.IntVar(&cfg.Limits.Burst, "rate-burst", cfg.Limits.Burst, "calls per key allowed at once above the rate")
	fs.Float64Var(&cfg.Limits.AgencyPerSecond, "agency-rate-limit", cfg.Limits.AgencyPerSecond, "calls a second per agency, all its keys together; 0 is no agency limit")
	fs.IntVar(&cfg.Limits.AgencyBurst, "agency-rate-burst", cfg.Limits.AgencyBurst, "calls per agency allowed at once above its rate")
	fs.Int64Var(&cfg.MaxBody, "max-body", cfg.MaxBody, "largest request body, in bytes")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "the most calls that ask Temporal (booking routes, voice tools) run at once; admission keeps the limit at or below it; 0 admits all")
	fs.DurationVar(&cfg.AdmitTarget, "admit-target", cfg.AdmitTarget, "the p95 of admitted calls admission aims at; past it calls are answered at once, not sent (503, retryable)")
	fs.IntVar(&cfg.FindsPerKeyHour, "finds-per-key-hour", cfg.FindsPerKeyHour, "find_booking's attempts an hour per API key, over all its calls "+
		"(a platform's key carries all its callers': size it for the platform); 0 is 300")
	fs.IntVar(&cfg.HandoffsPerKeyHour, "handoffs-per-key-hour", cfg.HandoffsPerKeyHour, "request_human's hand-offs an hour per API key, "+
		"counted for every API process; 0 is 120")
	fs.Func("caller-id-header", "routes whose X-Caller-Number header is caller ID, comma-separated (retell, mcp): only where a platform "+
		"in front of the API sets it itself; by default a header is not caller ID", func(v string) error {
		cfg.CallerIDHeader = strings.Split(v, ",")
		return nil
	})
	cfg.Mirrors.Register(fs)
	metricsListen := fs.String("metrics-listen", os.Getenv("METRICS_LISTEN"), "address for GET /metrics (Prometheus): each call's latency by route (env METRICS_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	m := metrics.New(logger)
	defer m.Close()
	if *metricsListen != "" {
		stop, err := m.Serve(*metricsListen)
		if err != nil {
			return err
		}
		defer stop()
	}
	a, err := app.NewAPI(ctx, cfg, logger, m.Scope())
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is something else using the port?)", *listen, err)
	}
	return a.Serve(ctx, ln, logger)
}
