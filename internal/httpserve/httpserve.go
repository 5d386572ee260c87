// Package httpserve is the one place HTTP servers are made, so that every
// one of them (the agent API, health, metrics, the dev stack's fakes) has
// read, write and idle timeouts: a client that opens a connection and
// dribbles, or never reads, cannot hold a goroutine and a socket forever.
package httpserve

import (
	"net/http"
	"time"
)

// Server returns a server for h with the timeouts set.
func Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Above the API's longest answer (a commit's wait, a voice tool's
		// few calls) and the fakes' longest injected hold.
		WriteTimeout: 45 * time.Second,
		IdleTimeout:  2 * time.Minute,
	}
}
