package payloadcodec

import (
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
)

// ServerOptions guard the codec server.
type ServerOptions struct {
	// Authorize says whether a request may use the codec; the caller
	// checks the bearer token (an ops-scoped API key, say).
	Authorize func(*http.Request) bool
	// Origins are the Web UI origins a browser may call from (CORS).
	Origins []string
	// Namespace, when set, is the only namespace served (X-Namespace).
	Namespace string
}

// Server serves the Temporal codec server protocol: POST /encode and
// /decode (also under a namespace path segment, as the CLI's templating
// makes them) with {"payloads": [...]}, the Web UI's CORS preflight, the
// X-Namespace header, and a check of the caller.
func Server(c *Codec, o ServerOptions) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(o.Origins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/encode") && !strings.HasSuffix(r.URL.Path, "/decode") {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if o.Authorize == nil || !o.Authorize(r) {
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		// An empty X-Namespace is the one served: the Temporal CLI sends it
		// empty without -n, meaning its default namespace.
		if ns := r.Header.Get("X-Namespace"); o.Namespace != "" && ns != "" && ns != o.Namespace {
			http.Error(w, "this codec serves namespace "+o.Namespace, http.StatusForbidden)
			return
		}
		codec.ServeHTTP(w, r)
	})
}
