package systemtest

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/agency/agencyheader"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// keyIDs are the payload keys a workflow's history names, read raw from
// the Temporal server: every payload the SDK wrote for it, its
// activities' and updates' included.
func (f *fixture) keyIDs(wid string) []string {
	f.t.Helper()
	it := f.client.GetWorkflowHistory(f.ctx, wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	named := regexp.MustCompile(`"encryption-key-id":\s*"([^"]+)"`)
	var ids []string
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		raw, err := protojson.Marshal(ev)
		require.NoError(f.t, err)
		for _, m := range named.FindAllStringSubmatch(string(raw), -1) {
			id, err := base64.StdEncoding.DecodeString(m[1])
			require.NoError(f.t, err)
			ids = append(ids, string(id))
		}
	}
	return ids
}

// An agency with payload keys of its own has every payload of its sagas,
// their activities', updates' and children's, sealed under its key; the
// default agency's stay under the deployment's. Lyon's key destroyed
// with its data, or rotated, touches no other agency's history.
func TestEachAgencysHistoriesAreSealedUnderItsOwnKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lyon := f.addAgency("lyon")
	file := filepath.Join(t.TempDir(), "payload-keys.json")
	deployment, err := payloadcodec.AddKey(file, "")
	require.NoError(t, err)
	lyonKey, err := payloadcodec.AddKey(file, "lyon")
	require.NoError(t, err)
	keys, err := payloadcodec.LoadKeys(file)
	require.NoError(t, err)
	sealed := temporalServer().NewClientWithOptions(client.Options{DataConverter: payloadcodec.New(keys).DataConverter(),
		ContextPropagators: []workflow.ContextPropagator{agencyheader.Propagator{}}})
	queue := f.queue + "-sealed"
	w := worker.New(sealed, queue, worker.Options{})
	app.Register(w, f.acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	sc := sagaclient.New(sealed, sagaclient.Options{TaskQueue: queue, Settings: f.settings, Margin: time.Minute})

	for i, c := range []struct {
		ctx  context.Context
		want string
	}{{f.ctx, deployment}, {lyon, lyonKey}} {
		key := uuid.NewString()
		r, err := sc.Commit(c.ctx, key, commitRequest(slot(t, 10+i)))
		require.NoError(t, err)
		require.Equal(t, receipt.StatusConfirmed, r.Status)
		wid := agency.Scoped(c.ctx, key)
		f.eventually(func() bool {
			v, err := sealed.QueryWorkflow(c.ctx, wid, "", booking.QueryState)
			var st workflows.BookingState
			return err == nil && v.Get(&st) == nil && st.CalendarSynced && st.CRMSynced
		}, "mirrored: the activities ran")
		ids := f.keyIDs(wid)
		require.NotEmpty(t, ids, "the history is sealed")
		for _, id := range ids {
			require.Equal(t, c.want, id, "%s's history names another key", agency.From(c.ctx).ID)
		}
	}
}
