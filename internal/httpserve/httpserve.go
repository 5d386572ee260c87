// Package httpserve is the one place HTTP servers are made, so that every
// one of them (the agent API, health, metrics, the dev stack's fakes) has
// read, write and idle timeouts: a client that opens a connection and
// dribbles, or never reads, cannot hold a goroutine and a socket forever.
package httpserve

import (
	"fmt"
	"net"
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

// Listen serves h on addr in the background until stop is called: a side
// server (health, metrics, profiles, the codec) beside a process's work.
// what names it in the error when addr is taken.
func Listen(addr, what string, h http.Handler) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listener %s: %w", what, addr, err)
	}
	srv := Server(h)
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
