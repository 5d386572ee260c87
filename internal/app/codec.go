package app

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// serveCodec serves the codec server to operators: an ops-scoped API key
// as the bearer token (the Temporal CLI's --codec-auth), or the UI token
// as the path's first segment (the Web UI sends no bearer without OIDC).
func serveCodec(cfg Config) (func(), error) {
	codec, err := cfg.Temporal.Codec()
	if err != nil {
		return nil, err
	}
	if codec == nil {
		return nil, errors.New("codec-listen needs payload keys (-payload-keys): there is nothing to decode")
	}
	var keys *api.Keyring
	if cfg.APIKeysFile != "" {
		if keys, err = api.LoadKeyring(cfg.APIKeysFile); err != nil {
			return nil, err
		}
	}
	if keys == nil && cfg.CodecUIToken == "" {
		return nil, errors.New("codec-listen needs -api-keys (ops keys) or -codec-ui-token: a codec open to anyone decodes every history")
	}
	authorize := func(r *http.Request) bool {
		if secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && keys != nil && keys.Allows(secret, api.ScopeOps) {
			return true
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		return cfg.CodecUIToken != "" && subtle.ConstantTimeCompare([]byte(first), []byte(cfg.CodecUIToken)) == 1
	}
	ln, err := net.Listen("tcp", cfg.CodecListen)
	if err != nil {
		return nil, fmt.Errorf("codec listener %s: %w", cfg.CodecListen, err)
	}
	var origins []string
	for _, o := range strings.Split(cfg.CodecOrigin, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	srv := httpserve.Server(payloadcodec.Server(codec, payloadcodec.ServerOptions{Authorize: authorize, Origins: origins,
		Namespace: cfg.Temporal.Namespace}))
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}

// newToken is a random secret for a path.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
