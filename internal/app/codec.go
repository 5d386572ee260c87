package app

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"

	"github.com/bookingsaga/bookingsaga/internal/codecserve"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
)

// serveCodec serves the codec server to operators beside the worker.
func serveCodec(cfg Config) (func(), error) {
	codec, err := cfg.Temporal.Codec()
	if err != nil {
		return nil, err
	}
	h, err := codecserve.Handler(codecserve.Config{Codec: codec, KeysFile: cfg.APIKeysFile, UIToken: cfg.CodecUIToken,
		Origins: cfg.CodecOrigin, Namespace: cfg.Temporal.Namespace})
	if err != nil {
		return nil, fmt.Errorf("codec-listen: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.CodecListen)
	if err != nil {
		return nil, fmt.Errorf("codec listener %s: %w", cfg.CodecListen, err)
	}
	srv := httpserve.Server(h)
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}

// newToken is a random secret for a path.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
