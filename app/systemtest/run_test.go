package systemtest

import (
	"context"
	"testing"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// Ctrl-C while the worker is still starting (the dev stack prints its
// banner before the worker has checked the namespace) is a clean stop,
// not a failed start: nothing was served yet, and nothing is lost.
func TestAnInterruptWhileStartingIsACleanStop(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Temporal.Address, cfg.Temporal.Namespace = temporalServer().GetFrontendHostPort(), temporalServer().GetDefaultNamespace()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	core, logs := observer.New(zapcore.InfoLevel)
	require.NoError(t, app.Run(ctx, cfg, zap.New(core)))
	require.Equal(t, 1, logs.FilterMessage("worker stopped cleanly").Len())
}
