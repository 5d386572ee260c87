package app

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// Codec serves the payload codec to operators: the Temporal Web UI and
// CLI decode histories through it. The worker serves it beside its work
// (-codec-listen); `starter codec` serves it alone, for a deployment whose
// UI runs apart. Codec is who may decode, and from where.
type Codec struct {
	// Codec holds the payload keys; without them there is nothing to serve.
	Codec *payloadcodec.Codec
	// KeysFile is the API keys file: an ops-scoped key is a bearer token
	// (the Temporal CLI's --codec-auth).
	KeysFile string
	// UIToken, when set, lets a call whose path starts with it in: the Web
	// UI sends no bearer token without OIDC, so its codec endpoint
	// carries one.
	UIToken string
	// Origins are the Web UI's origins, comma-separated, allowed to call
	// from a browser.
	Origins   string
	Namespace string
}

// Handler is the codec server for cfg.
func (cfg Codec) Handler() (http.Handler, error) {
	if cfg.Codec == nil {
		return nil, errors.New("the codec server needs payload keys: there is nothing to decode")
	}
	var keys *apikey.Keyring
	if cfg.KeysFile != "" {
		var err error
		if keys, err = apikey.LoadKeyring(cfg.KeysFile); err != nil {
			return nil, err
		}
	}
	if keys == nil && cfg.UIToken == "" {
		return nil, errors.New("the codec server needs API keys (ops scope) or a UI token: a codec open to anyone decodes every history")
	}
	authorize := func(r *http.Request) bool {
		if secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && keys != nil && keys.Allows(secret, apikey.ScopeOps) {
			return true
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		return cfg.UIToken != "" && subtle.ConstantTimeCompare([]byte(first), []byte(cfg.UIToken)) == 1
	}
	var origins []string
	for _, o := range strings.Split(cfg.Origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	return payloadcodec.Server(cfg.Codec, payloadcodec.ServerOptions{Authorize: authorize, Origins: origins,
		Namespace: cfg.Namespace}), nil
}

// newToken is a random secret for a path.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
