package systemtest

import (
	"strings"
	"testing"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The Temporal UI reads a saga's user metadata: the static summary names
// the property, the local time and the reference; the current details
// follow the saga's state and what the agent is told, and change on
// cancel; the history's activities and timers carry business names.
func TestTheUIShowsWhatEachSagaIs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key, loser := uuid.NewString(), uuid.NewString()
	req := commitRequest(slot(t, 10))
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, req).Status)
	require.Equal(t, receipt.StatusConflict, f.commit(loser, req).Status)

	desc, err := f.client.DescribeWorkflowExecution(f.ctx, key, "")
	require.NoError(t, err)
	summary := f.text(desc.GetExecutionConfig().GetUserMetadata().GetSummary())
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	local := req.Intent.StartsAt.In(loc).Format("Mon 2 Jan 2006 15:04")
	require.Equal(t, "Viewing · paris-11 · "+local+" Europe/Paris · "+receipt.Reference(key), summary)
	static := f.text(desc.GetExecutionConfig().GetUserMetadata().GetDetails())
	require.Contains(t, static, "| Agent | agent-00 |")
	require.Contains(t, static, "| Policy version | "+policyVersion+" |")

	f.eventually(func() bool { return strings.Contains(f.details(key), "| Calendar | written |") }, "details show the calendar written")
	details := f.details(key)
	require.Contains(t, details, "**CONFIRMED** · the agent is told `confirmed`")
	require.Contains(t, details, "| Viewing | "+local+"–")
	require.Contains(t, details, "| Next | viewing ends; the saga closes · ")
	require.Contains(t, f.details(loser), "**CONFLICT** · the agent is told `conflict`")

	_, err = f.saga().Cancel(f.ctx, key)
	require.NoError(t, err)
	f.eventually(func() bool { return strings.Contains(f.details(key), "**CANCELLED** · the agent is told `cancelled`") }, "details follow the cancel")

	steps := f.summaries(key)
	for _, want := range []string{"commit in the store", "release the booking in the store", "write calendar event",
		"viewing ends; the saga closes"} {
		require.Contains(t, steps, want)
	}

	// The list view tells a conflict from a confirmation by its status.
	res, err := f.client.ListWorkflow(f.ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowId = '" + loser + "'"})
	require.NoError(t, err)
	require.Len(t, res.GetExecutions(), 1)
	var status string
	sa := res.GetExecutions()[0].GetSearchAttributes().GetIndexedFields()[visibility.AttrStatus.GetName()]
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(sa, &status))
	require.Equal(t, "CONFLICT", status)
}

// details reads a saga's current details as the UI does, through the
// SDK's built-in metadata query.
func (f *fixture) details(key string) string {
	f.t.Helper()
	v, err := f.client.QueryWorkflow(f.ctx, key, "", "__temporal_workflow_metadata")
	require.NoError(f.t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(f.t, v.Get(&md))
	return md.GetCurrentDetails()
}

// summaries lists the summaries on a saga's history events.
func (f *fixture) summaries(key string) []string {
	f.t.Helper()
	var out []string
	it := f.client.GetWorkflowHistory(f.ctx, key, "", false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			out = append(out, f.text(p))
		}
	}
	return out
}

func (f *fixture) text(p *commonpb.Payload) string {
	f.t.Helper()
	var s string
	require.NoError(f.t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	return s
}
