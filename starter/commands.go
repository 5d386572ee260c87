package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/mirrors"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// serve runs the HTTP API until ctx ends, then drains for up to 10 s.
func serve(ctx context.Context, tc client.Client, cfg0 config, sco sagaclient.Options, logger *zap.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", envOr("API_LISTEN", "127.0.0.1:8080"), "address to serve on (env API_LISTEN)")
	dbURL := fs.String("database-url", cfg0.DatabaseURL, "PostgreSQL: contacts are sealed under keys the store keeps, and reads (availability, status) start no workflow (env DATABASE_URL)")
	keysFile := fs.String("keys", os.Getenv("API_KEYS_FILE"), "the API keys file, hashed keys as 'starter keys new' writes them; re-read when it changes (env API_KEYS_FILE)")
	limits := api.DefaultLimits()
	fs.Float64Var(&limits.PerSecond, "rate-limit", limits.PerSecond, "calls a second per key; repeats of one call are free; 0 is no limit")
	fs.IntVar(&limits.Burst, "rate-burst", limits.Burst, "calls per key allowed at once above the rate")
	cfg := api.Config{RetellKey: os.Getenv("RETELL_API_KEY"), VapiSecret: os.Getenv("VAPI_SECRET"),
		VapiHMACSecret: os.Getenv("VAPI_HMAC_SECRET"), Log: logger, Limits: &limits}
	fs.Int64Var(&cfg.MaxBody, "max-body", 64<<10, "largest request body, in bytes")
	mirrorCfg := cfg0.Mirrors
	mirrorCfg.Register(fs)
	metricsListen := fs.String("metrics-listen", os.Getenv("METRICS_LISTEN"), "address for GET /metrics (Prometheus): each call's latency by route (env METRICS_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m := metrics.New(logger)
	defer m.Close()
	cfg.Metrics = m.Scope()
	if *metricsListen != "" {
		stop, err := m.Serve(*metricsListen)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *keysFile == "" {
		return errors.New("no API keys: set -keys or API_KEYS_FILE to a keys file (make one with 'starter keys new')")
	}
	if *dbURL == "" {
		return errors.New("no database: set -database-url or DATABASE_URL (the API seals contacts under keys the store keeps)")
	}
	if err := mirrorCfg.Validate(); err != nil {
		return err
	}
	vault, err := openStore(ctx, *dbURL, mirrorCfg, logger)
	if err != nil {
		return err
	}
	defer vault.close()
	sco.Catalog = vault.catalog
	sco.Contacts, cfg.Contacts, cfg.Names, cfg.Bookings, cfg.Webhooks = vault.store, vault.store, vault.store, vault.store, vault.store
	sc := sagaclient.New(tc, sco)
	cfg.Ready = []api.Check{{Name: "temporal", Fn: sc.Healthy}, {Name: "store", Fn: vault.ping}}
	keys, err := api.LoadKeyring(*keysFile)
	if err != nil {
		return err
	}
	cfg.Keys = keys
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is something else using the port?)", *listen, err)
	}
	srv := httpserve.Server(api.New(sc, cfg).Handler())
	// Serve returns as soon as Shutdown begins; the process must live on
	// until Shutdown has answered the calls in flight, or they get an EOF.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	logger.Info("agent API listening", zap.String("addr", ln.Addr().String()))
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-drained
	logger.Info("agent API stopped; calls in flight were answered")
	return nil
}

// terminal runs book, status, cancel or reschedule and prints the receipt.
func terminal(ctx context.Context, sc *sagaclient.Client, cmd string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the receipt as JSON")
	var slot api.Slot
	var policy, key string
	if cmd == "book" || cmd == "reschedule" {
		fs.StringVar(&slot.PropertyID, "property", "", "property id")
		fs.StringVar(&slot.AgentID, "agent", "", "agent id")
		fs.StringVar(&slot.StartsAt, "start", "", "start, RFC 3339 with offset")
		fs.StringVar(&slot.LocalStart, "local", "", "start as local wall time, e.g. 2026-12-08T10:00 (with -zone)")
		fs.StringVar(&slot.TimeZone, "zone", "", "the property's IANA zone")
		minutes := 30
		if cmd == "reschedule" {
			minutes = 0 // the old booking's
		}
		fs.IntVar(&slot.DurationMinutes, "minutes", minutes, "length in minutes (reschedule: the old booking's)")
		fs.StringVar(&policy, "policy", "", "expected policy version (from availability)")
		fs.StringVar(&key, "key", "", "request key; a new one is made (and printed) when empty: reuse it to retry")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	r, err := runTerminal(ctx, sc, cmd, pos, api.BookingBody{RequestKey: key, Slot: slot, ExpectedPolicyVersion: policy})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out, r)
	}
	_, err = fmt.Fprintf(out, "%-22s %s\n%-22s %s\n", "status", r.Status, "request_key", r.RequestKey)
	if err == nil {
		_, err = fmt.Fprintf(out, "%-22s %s\n", "agent may say", speech.Speaker{Lang: speech.English}.Receipt(r))
	}
	return err
}

func runTerminal(ctx context.Context, sc *sagaclient.Client, cmd string, pos []string, b api.BookingBody) (receipt.Receipt, error) {
	if cmd != "book" && len(pos) != 1 {
		return receipt.Receipt{}, fmt.Errorf("%s needs exactly one request key", cmd)
	}
	switch cmd {
	case "status":
		// A reference is what a caller reads back (BS-XXXX-XXXX); request
		// keys can't start with it (booking.ValidateKey).
		if strings.HasPrefix(pos[0], booking.ReferencePrefix) {
			return sc.ByReference(ctx, pos[0])
		}
		return sc.Status(ctx, pos[0])
	case "cancel":
		return sc.Cancel(ctx, pos[0])
	}
	if b.RequestKey == "" {
		b.RequestKey = uuid.NewString()
	}
	if cmd == "reschedule" {
		if err := missing(cmd, b, "-start or -local", "-policy"); err != nil {
			return receipt.Receipt{}, err
		}
		// The booking as the store holds it, other resources included.
		old, err := sc.Timeline(ctx, pos[0])
		if err != nil {
			return receipt.Receipt{}, err
		}
		if old.Booking == nil {
			return receipt.Receipt{}, fmt.Errorf("the store holds no booking under %s to move; check its status first", pos[0])
		}
		move := api.RescheduleBody{Slot: b.Slot, ExpectedPolicyVersion: b.ExpectedPolicyVersion}
		move.DefaultFrom(old.Booking.Intent, "")
		b.Slot, b.ExpectedPolicyVersion = move.Slot, move.ExpectedPolicyVersion
	} else if err := missing(cmd, b, "-property", "-agent", "-zone", "-start or -local", "-policy"); err != nil {
		return receipt.Receipt{}, err
	}
	req, e := b.Request(time.Now())
	if e != nil {
		return receipt.Receipt{}, e
	}
	if cmd == "reschedule" {
		return sc.Reschedule(ctx, pos[0], b.RequestKey, req)
	}
	return sc.Commit(ctx, b.RequestKey, req)
}

// missing names every one of flags that b lacks, at once.
func missing(cmd string, b api.BookingBody, flags ...string) error {
	set := map[string]bool{"-property": b.PropertyID != "", "-agent": b.AgentID != "", "-zone": b.TimeZone != "",
		"-start or -local": b.StartsAt != "" || b.LocalStart != "", "-policy": b.ExpectedPolicyVersion != ""}
	var lack []string
	for _, f := range flags {
		if !set[f] {
			lack = append(lack, f)
		}
	}
	if len(lack) == 0 {
		return nil
	}
	return fmt.Errorf("%s needs %s", cmd, strings.Join(lack, ", "))
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments ("cancel KEY -json" as well as "cancel -json KEY"), and
// returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// printJSON is every command's --json output.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// storeConn is a command's own small connection to the store: contact
// keys, readiness, and the catalogue's reads (availability, decisions,
// the ops reads), which start no workflow.
type storeConn struct {
	store   *store.Store
	catalog *catalog.Catalog
	ping    func(context.Context) error
	close   func()
}

func openStore(ctx context.Context, url string, mc mirrors.Config, log *zap.Logger) (storeConn, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return storeConn{}, fmt.Errorf("database url: %w", err)
	}
	pc.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return storeConn{}, fmt.Errorf("connect database: %w", err)
	}
	st := store.New(pool, store.Config{})
	cat, err := mc.Catalog(ctx, st, log)
	if err != nil {
		pool.Close()
		return storeConn{}, err
	}
	return storeConn{store: st, catalog: cat, ping: pool.Ping, close: pool.Close}, nil
}

func joinSorted(xs []string) string {
	slices.Sort(xs)
	return strings.Join(xs, ", ")
}
