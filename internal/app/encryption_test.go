package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// TestHistoriesHoldNoContactInPlainText books with a caller's name and
// phone through clients that encrypt payloads, reads the saga's history
// raw from the Temporal server (gRPC, no codec) and finds neither; the
// codec then reads the same history back.
func TestHistoriesHoldNoContactInPlainText(t *testing.T) {
	t.Parallel()
	f := setup(t)
	keysFile := filepath.Join(t.TempDir(), "payload-keys.json")
	_, err := payloadcodec.AddKey(keysFile)
	require.NoError(t, err)
	keys, err := payloadcodec.LoadKeys(keysFile)
	require.NoError(t, err)
	codec := payloadcodec.New(keys)
	sealed := temporalServer().NewClientWithOptions(client.Options{DataConverter: codec.DataConverter()})
	queue := f.queue + "-sealed"
	w := worker.New(sealed, queue, worker.Options{})
	register(w, f.acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	sc := sagaclient.New(sealed, sagaclient.Options{TaskQueue: queue, Settings: f.settings})

	const name, phone = "Ada Lovelace", "+33 6 12 34 56 78"
	key := uuid.NewString()
	req := commitRequest(slot(t, 16))
	req.Contact = &booking.Contact{Name: name, Phone: phone}
	r, err := sc.Commit(f.ctx, key, req)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	f.eventually(func() bool {
		st, err := sc.Status(f.ctx, key)
		return err == nil && st.Status == receipt.StatusConfirmed
	}, "the saga answers through the codec")

	h := &history.History{}
	it := f.client.GetWorkflowHistory(f.ctx, key, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	// The wire form: payload bytes as they are stored, not base64.
	raw, err := proto.Marshal(h)
	require.NoError(t, err)
	for _, secret := range []string{"Lovelace", "12 34 56 78"} {
		require.NotContains(t, string(raw), secret, "in plain text in the history")
	}

	var decoded []string
	for _, ev := range h.Events {
		if in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetArgs(); in != nil {
			plain, err := codec.Decode(in.GetPayloads())
			require.NoError(t, err)
			for _, p := range plain {
				decoded = append(decoded, string(p.GetData()))
			}
		}
	}
	require.Contains(t, strings.Join(decoded, " "), name, "the codec reads the history back")
}
