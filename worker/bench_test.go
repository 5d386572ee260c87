package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/receipt"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// BenchmarkToolCallToReceipt measures what a voice agent waits for: one
// commit through Update-with-Start, from the call to the receipt. Three
// kinds of call run on one server, in alternating phases:
//   - "saga": the booking saga, with the real store and the calendar and
//     CRM fakes behind it;
//   - "commit-only": a workflow whose update runs the saga's commit local
//     activity and answers, with no mirrors, timers or search attributes:
//     the least any design of the saga adds to the engine;
//   - "noop": a workflow whose update answers at once, the engine's floor.
//
// Run with
//
//	go test ./worker -run '^$' -bench ToolCallToReceipt -benchtime 800x
func BenchmarkToolCallToReceipt(b *testing.B) {
	for _, callers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) { benchToolCall(b, callers) })
	}
}

// phases is how many slices each kind's b.N calls are run in. The kinds
// take turns, in the order saga, commit-only, noop and then back, so drift
// in a noisy machine's speed falls on all of them alike, and so does the
// tail of a saga's background work spilling into the phase after it.
const phases = 4

// kind is one kind of call and the latencies it measured.
type kind struct {
	name string
	call func(context.Context) error
	lat  []time.Duration
	wall time.Duration
}

func benchToolCall(b *testing.B, callers int) {
	f := setup(b)
	// The commit's own latency (the local activity: calendar re-check and
	// store commit) is reported beside the calls', to show where time goes.
	scope := tally.NewTestScope("", nil)
	f.acts.Metrics = scope
	book := f.benchBooker()
	kinds := []*kind{
		{name: "saga", call: book(f.queue)},
		{name: "commit-only", call: book(benchWorker(b, f.client, commitOnly(f.acts)))},
		{name: "noop", call: noopCall(f.client, benchWorker(b, f.client, noopBooking))},
	}
	b.ResetTimer()
	for p := range phases {
		n := b.N / phases
		if p < b.N%phases {
			n++
		}
		for i := range kinds {
			k := kinds[i]
			if p%2 == 1 {
				k = kinds[len(kinds)-1-i]
			}
			require.NoError(b, k.run(callers, n), k.name)
		}
	}
	b.StopTimer()
	report(b, kinds, scope)
}

// benchBooker seeds the properties and agents the callers book, and returns
// a call that books a fresh free slot through the given task queue.
func (f *fixture) benchBooker() func(queue string) func(context.Context) error {
	// Callers book different properties and agents, as callers of a real
	// agency mostly do; one hot property would measure its lock queue.
	const pairs = 64
	for j := range pairs {
		for _, r := range []store.Resource{
			{ID: fmt.Sprintf("bench-p%02d", j), Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: fmt.Sprintf("bench-p%02d@calendar.test", j)},
			{ID: fmt.Sprintf("bench-a%02d", j), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"},
		} {
			require.NoError(f.t, f.acts.Store.UpsertResource(f.ctx, r))
		}
	}
	var next atomic.Int64
	base := slot(f.t, 8)
	return func(queue string) func(context.Context) error {
		return func(ctx context.Context) error {
			// Each call books its own free slot: 30-minute steps through
			// the bookable hours, day after day, round the pairs.
			i := next.Add(1) - 1
			n := i / pairs
			start := base.AddDate(0, 0, int(n/24)).Add(time.Duration(n%24) * 30 * time.Minute)
			req := commitRequest(start)
			req.Intent.PropertyID, req.Intent.AgentID = fmt.Sprintf("bench-p%02d", i%pairs), fmt.Sprintf("bench-a%02d", i%pairs)
			r, err := workflows.Commit(ctx, f.client, queue, workflows.BookingInput{RequestKey: uuid.NewString()}, req)
			if err == nil && r.Status != receipt.StatusConfirmed {
				err = fmt.Errorf("booking %d: %s", i, r.Status)
			}
			return err
		}
	}
}

// benchWorker runs wf as the booking workflow on a task queue of its own.
func benchWorker(b *testing.B, c client.Client, wf func(workflow.Context, workflows.BookingInput) error) string {
	queue := "bench-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: workflows.BookingWorkflowName})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	return queue
}

// noopBooking is the engine's floor: a workflow whose commit update answers
// at once, started the same way (Update-with-Start) on the same server.
func noopBooking(ctx workflow.Context, _ workflows.BookingInput) error {
	if err := workflow.SetUpdateHandler(ctx, workflows.UpdateCommit, func(_ workflow.Context, _ workflows.CommitRequest) (receipt.Receipt, error) {
		return receipt.Receipt{Status: receipt.StatusConfirmed}, nil
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// noopCall starts a no-op workflow and waits for its update's answer.
func noopCall(c client.Client, queue string) func(context.Context) error {
	return func(ctx context.Context) error {
		op := c.NewWithStartWorkflowOperation(workflows.StartOptions(uuid.NewString(), queue), workflows.BookingWorkflowName, workflows.BookingInput{})
		h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: workflows.UpdateCommit, Args: []any{workflows.CommitRequest{}},
				WaitForStage: client.WorkflowUpdateStageCompleted}})
		if err != nil {
			return err
		}
		var r receipt.Receipt
		return h.Get(ctx, &r)
	}
}

// commitOnly is the floor plus the commit alone: its update runs the
// saga's commit local activity, as the saga does, and answers.
func commitOnly(acts *activities.Activities) func(workflow.Context, workflows.BookingInput) error {
	return func(ctx workflow.Context, in workflows.BookingInput) error {
		if err := workflow.SetUpdateHandler(ctx, workflows.UpdateCommit, func(ctx workflow.Context, req workflows.CommitRequest) (receipt.Receipt, error) {
			lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 3 * time.Second})
			var out activities.CommitOutput
			err := workflow.ExecuteLocalActivity(lctx, acts.Commit, activities.CommitInput{RequestKey: in.RequestKey,
				Intent: req.Intent, ExpectedPolicyVersion: req.ExpectedPolicyVersion}).Get(ctx, &out)
			return receipt.Receipt{Status: receipt.StatusConfirmed, BookingID: out.Booking.BookingID.String()}, err
		}); err != nil {
			return err
		}
		return workflow.Await(ctx, func() bool { return false })
	}
}

// run makes n calls from callers closed-loop goroutines and keeps each
// call's latency.
func (k *kind) run(callers, n int) error {
	ctx := context.Background()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	t0 := time.Now()
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				start := time.Now()
				if err := k.call(ctx); err != nil {
					failed.Store(&err)
					return
				}
				lat[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	k.wall += time.Since(t0)
	k.lat = append(k.lat, lat...)
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// report gives each kind's p50, p99 and calls per second, the p50 ratios
// against the floor, and the commit local activity's own p50.
func report(b *testing.B, kinds []*kind, scope tally.TestScope) {
	p50 := map[string]float64{}
	for _, k := range kinds {
		slices.Sort(k.lat)
		p50[k.name] = ms(k.lat[len(k.lat)/2])
		b.ReportMetric(p50[k.name], k.name+"-p50-ms")
		b.ReportMetric(ms(k.lat[len(k.lat)*99/100]), k.name+"-p99-ms")
		b.ReportMetric(float64(len(k.lat))/k.wall.Seconds(), k.name+"-calls/s")
	}
	b.ReportMetric(p50["saga"]/p50["noop"], "saga/noop")
	b.ReportMetric(p50["commit-only"]/p50["noop"], "commit-only/noop")
	var commits []time.Duration
	for _, t := range scope.Snapshot().Timers() {
		commits = append(commits, t.Values()...)
	}
	require.NotEmpty(b, commits)
	slices.Sort(commits)
	b.ReportMetric(ms(commits[len(commits)/2]), "commit-p50-ms")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
