package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Beside a dev stack's data dir, a terminal command reads its payload keys
// by itself; the API server never does, so it can't encrypt what workers
// set up otherwise could not read.
func TestOnlyTerminalCommandsTakeTheDevStacksKeys(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".bookingsaga"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, devPayloadKeys), []byte("{}"), 0o600))
	t.Chdir(dir)
	for cmd, want := range map[string]string{"status": devPayloadKeys, "book": devPayloadKeys, "serve": ""} {
		var cfg config
		devKeysDefault(&cfg, cmd)
		require.Equal(t, want, cfg.Temporal.PayloadKeysFile, cmd)
	}
	cfg := config{}
	cfg.Temporal.PayloadKeysFile = "/etc/keys.json"
	devKeysDefault(&cfg, "serve")
	require.Equal(t, "/etc/keys.json", cfg.Temporal.PayloadKeysFile, "what was set stays")
}
