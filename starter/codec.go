package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
)

// codec serves the payload codec to operators until ctx ends: the Web UI
// (through a path token) and the Temporal CLI (an ops key as bearer).
func codec(ctx context.Context, cfg app.ClientConfig, args []string) error {
	fs := flag.NewFlagSet("codec", flag.ContinueOnError)
	listen := fs.String("listen", envOr("CODEC_LISTEN", "127.0.0.1:8094"), "address to serve on (env CODEC_LISTEN)")
	keys := fs.String("keys", os.Getenv("API_KEYS_FILE"), "the API keys file: ops keys are bearer tokens (env API_KEYS_FILE)")
	token := fs.String("ui-token", os.Getenv("CODEC_UI_TOKEN"), "a secret first path segment for the Web UI's codec endpoint (env CODEC_UI_TOKEN)")
	origin := fs.String("origin", os.Getenv("CODEC_ORIGIN"), "the Web UI's origins, comma-separated, for CORS (env CODEC_ORIGIN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := cfg.Temporal.Codec()
	if err != nil {
		return err
	}
	if c == nil {
		return errors.New("codec needs the payload keys: set -payload-keys or PAYLOAD_KEYS_FILE")
	}
	h, err := app.Codec{Codec: c, KeysFile: *keys, UIToken: *token, Origins: *origin,
		Namespace: cfg.Temporal.Namespace}.Handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	srv := httpserve.Server(h)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
