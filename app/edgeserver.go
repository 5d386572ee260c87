package app

import (
	"context"
	"net/http"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/callerpage"
	"github.com/bookingsaga/bookingsaga/api/staff"
	"github.com/bookingsaga/bookingsaga/api/texts"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// EdgeConfig is the agent edge's: the server's settings with those every
// route reads (Config.Settings), then each package of routes' own.
type EdgeConfig struct {
	edge.Config
	REST  api.Config
	Tools voice.Config
	Texts texts.Config
	Page  callerpage.Config
}

// Edge is the agent edge over sc: the REST routes, the voice tools, the
// callers' replies to their texts and the staff's routes mounted on one
// server, every one of them reading the same settings.
func Edge(sc *desk.Desk, cfg EdgeConfig) http.Handler { return edgeServer(sc, cfg).Handler() }

func edgeServer(sc *desk.Desk, cfg EdgeConfig) *edge.Server {
	if cfg.REST.Timeline == nil {
		cfg.REST.Timeline = func(ctx context.Context, key string) (any, error) { return sc.Timeline(ctx, key) }
	}
	srv := edge.New(cfg.Config)
	srv.Mount(api.New(sc, srv.Settings(), cfg.REST).Routes()...)
	srv.Mount(voice.New(sc, srv.Settings(), cfg.Tools).Routes()...)
	srv.Mount(texts.New(srv.Settings(), cfg.Texts).Routes()...)
	srv.Mount(callerpage.New(sc, srv.Settings(), cfg.Page).Routes()...)
	srv.Mount(staff.New(sc).Routes()...)
	return srv
}
