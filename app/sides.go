package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
)

// sides are what the worker's side servers read.
type sides struct {
	metrics  *metrics.Metrics
	pool     *pgxpool.Pool
	temporal client.Client
	log      *zap.Logger
}

// serveSides starts the side servers cfg names beside the worker:
// profiles, metrics with the pending gauge, the codec, health. Its stop
// stops those it started, after an error too.
func serveSides(ctx context.Context, cfg Config, s sides) (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var codec http.Handler
	if cfg.CodecListen != "" {
		var err error
		if codec, err = codecHandler(cfg); err != nil {
			return stop, err
		}
	}
	for _, side := range []struct {
		addr   string
		listen func() (func(), error)
	}{
		{cfg.PprofListen, func() (func(), error) { return httpserve.Listen(cfg.PprofListen, "pprof", pprofHandler()) }},
		{cfg.MetricsListen, func() (func(), error) { return s.metrics.Serve(cfg.MetricsListen) }},
		{cfg.CodecListen, func() (func(), error) { return httpserve.Listen(cfg.CodecListen, "codec", codec) }},
		{cfg.HealthListen, func() (func(), error) { return httpserve.Listen(cfg.HealthListen, "health", healthHandler(s.pool)) }},
	} {
		if side.addr == "" {
			continue
		}
		halt, err := side.listen()
		if err != nil {
			return stop, err
		}
		stops = append(stops, halt)
	}
	if cfg.MetricsListen != "" {
		wctx, cancel := context.WithCancel(ctx)
		stops = append(stops, cancel)
		go watchPending(wctx, s.temporal, cfg.TaskQueue, s.metrics.Scope(), s.log)
	}
	return stop, nil
}

// pprofHandler serves Go's profiles (/debug/pprof/), for finding where
// the time goes under load (BENCHMARKS.md). Keep it on loopback: a
// profile shows the process's internals.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	return mux
}

// codecHandler is the codec server operators decode payloads through.
func codecHandler(cfg Config) (http.Handler, error) {
	codec, err := cfg.Temporal.Codec()
	if err != nil {
		return nil, err
	}
	h, err := Codec{Codec: codec, KeysFile: cfg.APIKeysFile, UIToken: cfg.CodecUIToken,
		Origins: cfg.CodecOrigin, Namespace: cfg.Temporal.Namespace}.Handler()
	if err != nil {
		return nil, fmt.Errorf("codec-listen: %w", err)
	}
	return h, nil
}

// healthHandler answers GET /healthz with 200 while the database
// answers, for container health checks.
func healthHandler(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := pool.Ping(ctx); err != nil {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
