package app

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// BenchmarkHistoryPerBooking counts what a confirmed, mirrored booking
// writes to Temporal's history against the no-op Update-with-Start
// workflow: events in all, and those that are workflow tasks, activities
// (each a scheduled, started and completed event and a task to dispatch),
// markers (local activities, side effects, versions), timers and
// search-attribute or metadata upserts (visibility writes).
//
//	go test ./internal/app -run '^$' -bench HistoryPerBooking -benchtime 20x
func BenchmarkHistoryPerBooking(b *testing.B) {
	f := setup(b)
	noopQueue := benchWorker(b, f.client, noopBooking)
	var saga, noop historyCount
	for i := 0; b.Loop(); i++ {
		key := uuid.NewString()
		booked := f.commit(key, commitRequest(slot(b, 8+i%12).AddDate(0, 0, i/12)))
		require.Equal(b, receipt.StatusConfirmed, booked.Status)
		f.eventually(func() bool { return f.synced(key) }, "mirrored")
		saga.add(f.history(key))
		id := uuid.NewString()
		op := f.client.NewWithStartWorkflowOperation(sagaclient.StartOptions(id, noopQueue), booking.BookingWorkflowName, workflows.BookingInput{})
		h, err := f.client.UpdateWithStartWorkflow(f.ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: booking.UpdateCommit, Args: []any{booking.CommitRequest{}},
				WaitForStage: client.WorkflowUpdateStageCompleted}})
		require.NoError(b, err)
		var r receipt.Receipt
		require.NoError(b, h.Get(f.ctx, &r))
		noop.add(f.history(id))
	}
	for name, c := range map[string]historyCount{"booking": saga, "noop": noop} {
		n := float64(c.runs)
		b.ReportMetric(float64(c.events)/n, "events/"+name)
		b.ReportMetric(float64(c.tasks)/n, "wftasks/"+name)
		b.ReportMetric(float64(c.activities)/n, "activities/"+name)
		b.ReportMetric(float64(c.markers)/n, "markers/"+name)
		b.ReportMetric(float64(c.timers)/n, "timers/"+name)
		b.ReportMetric(float64(c.upserts)/n, "upserts/"+name)
	}
}

type historyCount struct{ runs, events, tasks, activities, markers, timers, upserts int }

func (c *historyCount) add(h historyCount) {
	c.runs++
	c.events, c.tasks, c.activities, c.markers = c.events+h.events, c.tasks+h.tasks, c.activities+h.activities, c.markers+h.markers
	c.timers, c.upserts = c.timers+h.timers, c.upserts+h.upserts
}

// history counts a workflow's history so far.
func (f *fixture) history(id string) historyCount {
	f.t.Helper()
	var c historyCount
	it := f.client.GetWorkflowHistory(f.ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		c.events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			c.tasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			c.activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED: // a local activity, a side effect or a version
			c.markers++
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			c.timers++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
			c.upserts++
		}
	}
	return c
}
