package systemtest

import (
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
)

// record writes the workflow's history to workflows/testdata/<build> when
// RECORD_HISTORIES names the build, for the replay tests there. Each
// released build records its histories once, and they are kept for good:
// sagas stay open for weeks, so every build must replay what every earlier
// build wrote. Recording over a kept history is refused.
//
//	RECORD_HISTORIES=v0.2.0 go test ./app/systemtest -run 'Test.*'
//
// Before a change to the workflows goes in, the build before it records
// the histories that pass through what it changes, under
// before-<change id> (workflows' TestEveryChangeSinceV020HasAHistoryFromBeforeIt
// asks for them):
//
//	RECORD_HISTORIES=before-follow-zone-rules go test ./app/systemtest -run '^TestReconcileExpiresHoldsAndPurgesContacts$'
func (f *fixture) record(key, name string) {
	f.t.Helper()
	f.recordRun(key, "", name)
}

// recordRun is record for one run of key; "" is its latest.
func (f *fixture) recordRun(key, runID, name string) {
	f.t.Helper()
	build := os.Getenv("RECORD_HISTORIES")
	if build == "" {
		return
	}
	it := f.client.GetWorkflowHistory(f.ctx, key, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &history.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		h.Events = append(h.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(f.t, err)
	dir := filepath.Join("..", "..", "workflows", "testdata", build)
	require.NoError(f.t, os.MkdirAll(dir, 0o755))
	file, err := os.OpenFile(filepath.Join(dir, name+".json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	require.NoError(f.t, err, "kept histories are never recorded over")
	defer file.Close()
	_, err = file.Write(data)
	require.NoError(f.t, err)
}
