package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// Reads start no workflow: availability (good and malformed), a status
// read from the store and the ops reads leave no execution in Temporal,
// and so no FAILED one either. Before, each started a Catalog workflow,
// and a malformed one failed it.
func TestReadsStartNoWorkflow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.serveAPI(app.EdgeConfig{})
	start := slot(t, 10)
	day := start.Truncate(24 * time.Hour)

	q := url.Values{"property_id": {"paris-11"}, "agent_id": {"agent-00"},
		"from": {day.Format(time.RFC3339)}, "to": {day.Add(24 * time.Hour).Format(time.RFC3339)}}
	var av edge.AvailabilityAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/availability?"+q.Encode(), nil, &av))
	require.NotEmpty(t, av.Slots)
	q.Set("property_id", "no-such-property")
	var refusal map[string]any
	require.Equal(t, http.StatusBadRequest, f.call("GET", apiURL+"/v1/availability?"+q.Encode(), nil, &refusal))

	sc := f.sagas()
	_, err := sc.Attention(f.ctx)
	require.NoError(t, err)
	_, err = sc.Timeline(f.ctx, uuid.NewString())
	require.NoError(t, err)
	_, err = sc.Status(f.ctx, uuid.NewString())
	require.ErrorIs(t, err, sagaclient.ErrNotFound)

	// A booking made after the reads is the marker: once visibility lists
	// it, it lists whatever the reads started before it.
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(start)).Status)
	inQueue := "TaskQueue = '" + f.queue + "'"
	f.eventually(func() bool { return f.count(inQueue+" AND WorkflowId = '"+key+"'") == 1 }, "the marker booking listed")
	require.Equal(t, int64(1), f.count(inQueue), "executions on the queue: the booking's only")
	require.Zero(t, f.count("ExecutionStatus = 'Failed' AND "+inQueue))
}

// count asks Temporal's visibility how many executions match query.
func (f *fixture) count(query string) int64 {
	f.t.Helper()
	res, err := f.client.CountWorkflow(f.ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
	require.NoError(f.t, err)
	return res.GetCount()
}
