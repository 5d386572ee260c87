package systemtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// BenchmarkHistoryPerBooking counts what a confirmed, mirrored booking
// writes to Temporal against the no-op Update-with-Start workflow, and the
// soak's yardstick for the saga's shape (the booking's events with none of
// bookingsaga's work between them): history
// events in all, and those that are workflow tasks, activities (each a
// scheduled, started and completed event and a task to dispatch), markers
// (local activities, side effects, versions), timers and search-attribute
// or metadata upserts; and the server's persistence calls, writes (history
// and visibility) and reads, by operation. Each kind runs in a phase of
// its own, after a warm-up, settled until visibility shows them all, so
// that no kind's background writes land on another's.
//
//	go test ./app/systemtest -run '^$' -bench HistoryPerBooking -benchtime 20x
func BenchmarkHistoryPerBooking(b *testing.B) {
	f := setup(b)
	noopQueue, shapeQueue := benchWorker(b, f.client, noopBooking), yardstickQueue(b, f.client)
	book := func(i int) string {
		key := uuid.NewString()
		booked := f.commit(key, commitRequest(slot(b, 8+i%12).AddDate(0, 0, i/12)))
		require.Equal(b, receipt.StatusConfirmed, booked.Status)
		f.eventually(func() bool { return f.synced(key) }, "mirrored")
		return key
	}
	noopRun := func() string {
		id := uuid.NewString()
		op := f.client.NewWithStartWorkflowOperation(sagaclient.StartOptions(f.ctx, id, noopQueue), booking.BookingWorkflowName, workflows.BookingInput{})
		h, err := f.client.UpdateWithStartWorkflow(f.ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: booking.UpdateCommit, Args: []any{booking.CommitRequest{}},
				WaitForStage: client.WorkflowUpdateStageCompleted}})
		require.NoError(b, err)
		var r receipt.Receipt
		require.NoError(b, h.Get(f.ctx, &r))
		return id
	}
	book(12 * 40) // a new task queue's partitions are created on first use; a day no run reaches
	noopRun()
	f.visible(fmt.Sprintf("TaskQueue = '%s' AND %s = true", f.queue, visibility.AttrCalendarSynced.GetName()), 1)
	f.visible(fmt.Sprintf("TaskQueue = '%s'", noopQueue), 1)
	shapeSettled := fmt.Sprintf("TaskQueue = '%s' AND %s = true", shapeQueue, visibility.AttrCalendarSynced.GetName())
	f.shapeRun(shapeQueue)
	f.visible(shapeSettled, 1)

	var saga, noop historyCount
	var keys []string
	before := persistenceCalls()
	for i := 0; b.Loop(); i++ {
		keys = append(keys, book(i))
	}
	f.visible(fmt.Sprintf("TaskQueue = '%s' AND %s = true", f.queue, visibility.AttrCalendarSynced.GetName()), len(keys)+1)
	saga.addCalls(before, persistenceCalls())
	for _, k := range keys {
		saga.add(f.history(k))
	}
	before = persistenceCalls()
	var ids []string
	for range keys {
		ids = append(ids, noopRun())
	}
	f.visible(fmt.Sprintf("TaskQueue = '%s'", noopQueue), len(ids)+1)
	noop.addCalls(before, persistenceCalls())
	for _, id := range ids {
		noop.add(f.history(id))
	}
	var shape historyCount
	before = persistenceCalls()
	ids = ids[:0]
	for range keys {
		ids = append(ids, f.shapeRun(shapeQueue))
	}
	f.visible(shapeSettled, len(ids)+1)
	shape.addCalls(before, persistenceCalls())
	for _, id := range ids {
		shape.add(f.history(id))
	}
	for name, c := range map[string]historyCount{"booking": saga, "noop": noop, "shape": shape} {
		n := float64(c.runs)
		b.ReportMetric(float64(c.events)/n, "events/"+name)
		b.ReportMetric(float64(c.tasks)/n, "wftasks/"+name)
		b.ReportMetric(float64(c.activities)/n, "activities/"+name)
		b.ReportMetric(float64(c.markers)/n, "markers/"+name)
		b.ReportMetric(float64(c.timers)/n, "timers/"+name)
		b.ReportMetric(float64(c.upserts)/n, "upserts/"+name)
		b.ReportMetric(float64(sum(c.writes))/n, "pwrites/"+name)
		b.ReportMetric(float64(sum(c.reads))/n, "preads/"+name)
		for _, op := range slices.Sorted(maps.Keys(c.writes)) {
			b.Logf("%s writes: %s %.2f a run", name, op, float64(c.writes[op])/n)
		}
		for _, k := range slices.Sorted(maps.Keys(c.kinds)) {
			b.Logf("%s events: %s %.2f a run", name, k, float64(c.kinds[k])/n)
		}
	}
}

// visible waits until visibility counts at least n workflows for query.
func (f *fixture) visible(query string, n int) {
	f.t.Helper()
	f.eventually(func() bool {
		res, err := f.client.CountWorkflow(f.ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		return err == nil && res.GetCount() >= int64(n)
	}, "visibility shows "+query)
}

type historyCount struct {
	runs, events, tasks, activities, markers, timers, upserts int
	// kinds counts the events by type, with the activity, the marker or
	// the update they are of: the event table's rows (BENCHMARKS.md).
	kinds map[string]int
	// writes and reads are the server's persistence calls, by operation.
	writes, reads map[string]int64
}

// addCalls adds the persistence calls made between two counts.
func (c *historyCount) addCalls(before, after map[string]int64) {
	if c.writes == nil {
		c.writes, c.reads = map[string]int64{}, map[string]int64{}
	}
	for op, n := range after {
		if d := n - before[op]; d > 0 {
			if isRead(op) {
				c.reads[op] += d
			} else {
				c.writes[op] += d
			}
		}
	}
}

// persistenceCalls counts the test server's persistence calls so far, by
// operation.
func persistenceCalls() map[string]int64 {
	out := map[string]int64{}
	for _, c := range serverMetrics().Snapshot().Counters() {
		switch c.Name() {
		case "persistence_requests":
			out[c.Tags()["operation"]] += c.Value()
		case "visibility_persistence_requests":
			out["visibility "+c.Tags()["operation"]] += c.Value()
		}
	}
	return out
}

func isRead(op string) bool {
	for _, p := range []string{"Get", "List", "Read", "Scan", "Count", "Describe", "Is"} {
		if strings.HasPrefix(strings.TrimPrefix(op, "visibility "), p) {
			return true
		}
	}
	return false
}

func (c *historyCount) add(h historyCount) {
	c.runs++
	if c.kinds == nil {
		c.kinds = map[string]int{}
	}
	for k, n := range h.kinds {
		c.kinds[k] += n
	}
	c.events, c.tasks, c.activities, c.markers = c.events+h.events, c.tasks+h.tasks, c.activities+h.activities, c.markers+h.markers
	c.timers, c.upserts = c.timers+h.timers, c.upserts+h.upserts
}

// history counts a workflow's history so far.
func (f *fixture) history(id string) historyCount {
	f.t.Helper()
	c := historyCount{kinds: map[string]int{}}
	it := f.client.GetWorkflowHistory(f.ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		c.events++
		c.kinds[eventKind(ev)]++
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

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// eventKind names an event by its type and what it is of: the activity
// scheduled, the marker's name (a version's change id), the update.
func eventKind(ev *historypb.HistoryEvent) string {
	kind := strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")
	switch {
	case ev.GetActivityTaskScheduledEventAttributes() != nil:
		kind += " " + ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
	case ev.GetMarkerRecordedEventAttributes() != nil:
		a := ev.GetMarkerRecordedEventAttributes()
		kind += " " + a.GetMarkerName()
		if id, ok := a.GetDetails()["change-id"]; ok && len(id.GetPayloads()) > 0 {
			kind += " " + strings.Trim(string(id.GetPayloads()[0].GetData()), `"`)
		}
	case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
		kind += " " + ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName()
	case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
		kind += " " + ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName()
	}
	return kind
}
