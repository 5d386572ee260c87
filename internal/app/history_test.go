package app

import (
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
)

// record writes the workflow's history to workflows/testdata when
// RECORD_HISTORIES is set, for the replay tests there. Run it after a
// deliberate change to the saga:
//
//	RECORD_HISTORIES=1 go test ./internal/app -run 'Test.*'
func (f *fixture) record(key, name string) {
	f.t.Helper()
	if os.Getenv("RECORD_HISTORIES") == "" {
		return
	}
	it := f.client.GetWorkflowHistory(f.ctx, key, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &history.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		h.Events = append(h.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(f.t, err)
	require.NoError(f.t, os.WriteFile(filepath.Join("..", "..", "workflows", "testdata", name+".json"), data, 0o644))
}
