package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
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
		var cfg app.ClientConfig
		devKeysDefault(&cfg, cmd)
		require.Equal(t, want, cfg.Temporal.PayloadKeysFile, cmd)
	}
	cfg := app.ClientConfig{}
	cfg.Temporal.PayloadKeysFile = "/etc/keys.json"
	devKeysDefault(&cfg, "serve")
	require.Equal(t, "/etc/keys.json", cfg.Temporal.PayloadKeysFile, "what was set stays")
}

func TestFlagsMayFollowTheKey(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("cancel", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	note := fs.String("note", "", "")
	pos, err := parseInterleaved(fs, []string{"key-1", "-json", "-note", "done"})
	require.NoError(t, err)
	require.Equal(t, []string{"key-1"}, pos)
	require.True(t, *asJSON)
	require.Equal(t, "done", *note)
}

func TestEveryMissingFieldIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	err := missing("book", api.BookingBody{Slot: edge.Slot{AgentID: "a"}}, "-property", "-agent", "-zone", "-start or -local", "-policy")
	require.EqualError(t, err, "book needs -property, -zone, -start or -local, -policy")
	require.NoError(t, missing("reschedule", api.BookingBody{Slot: edge.Slot{LocalStart: "2026-12-08T10:00"}}, "-start or -local"))
}

func TestOpsHelpAndAnEmptyAttentionList(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, ops(context.Background(), nil, []string{"-h"}, &out))
	require.Contains(t, out.String(), "attention")
	out.Reset()
	require.NoError(t, human(&out, desk.Attention{}))
	require.Contains(t, out.String(), "Nothing needs attention")
}

// A booking outside its agent's new rules is listed with whom it could
// go to, and an attention list holding only that is not "nothing".
func TestAttentionListsABookingOutsideItsRulesWithTheTeamFree(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, human(&out, desk.Attention{OutsideRules: []booking.OutsideRules{{RequestKey: "k-ill", ResourceID: "agent-lea",
		StartsAt: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), Reason: "time off", FreeAgents: []string{"agent-tom", "agent-hugo"}}}}))
	require.NotContains(t, out.String(), "Nothing needs attention")
	require.Regexp(t, `k-ill\s+agent-lea\s+2026-12-08T09:00:00Z\s+time off\s+agent-tom agent-hugo`, out.String())
}
