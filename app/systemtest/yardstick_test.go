package systemtest

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/internal/yardstick"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The soak's yardstick for the saga's shape makes Temporal write what a
// confirmed, mirrored booking writes, event type for event type, so that
// its saturation is a booking's with bookingsaga's work taken out. A
// change to the saga's events fails this until the shape follows it.
func TestTheSagasShapeWritesWhatABookingWrites(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(t, 9))).Status)
	f.eventually(func() bool { return f.synced(key) }, "mirrored")
	id := f.shapeRun(yardstickQueue(t, f.client))

	want := eventTypes(f.history(key))
	require.Len(t, want, 10, "a booking writes events of ten types")
	require.Equal(t, want, eventTypes(f.history(id)))
}

// yardstickQueue runs the yardsticks on a task queue of their own.
func yardstickQueue(t testing.TB, c client.Client) string {
	queue := "yardstick-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	yardstick.Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return queue
}

// shapeRun starts the saga's shape on queue, as the soak does, and waits
// for its second workflow task: the one a booking's mirrors run in.
func (f *fixture) shapeRun(queue string) string {
	f.t.Helper()
	id := uuid.NewString()
	op := f.client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: queue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, yardstick.ShapeWorkflow)
	h, err := f.client.UpdateWithStartWorkflow(f.ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: yardstick.Update, WaitForStage: client.WorkflowUpdateStageCompleted}})
	require.NoError(f.t, err)
	require.NoError(f.t, h.Get(f.ctx, nil))
	f.eventually(func() bool { return f.history(id).timers == 2 }, "the shape's second workflow task")
	return id
}

// eventTypes counts c's events by type alone, without what they are of
// (the activity, the change id, the update's name).
func eventTypes(c historyCount) map[string]int {
	out := map[string]int{}
	for kind, n := range c.kinds {
		typ, _, _ := strings.Cut(kind, " ")
		out[typ] += n
	}
	return out
}
