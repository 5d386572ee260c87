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

	"github.com/bookingsaga/bookingsaga/internal/receipt"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/workflows"
)

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

// BenchmarkToolCallToReceipt measures what a voice agent waits for: one
// commit through Update-with-Start, from the call to the receipt, with the
// real store, calendar and CRM fakes behind it ("saga"), the same without
// mirrors ("saga-nomirror"), and the no-op workflow that gives the engine's
// own cost ("noop"). Run with
//
//	go test ./worker -run '^$' -bench ToolCallToReceipt -benchtime 400x
func BenchmarkToolCallToReceipt(b *testing.B) {
	for _, callers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("saga/callers=%d", callers), func(b *testing.B) { benchSaga(b, callers, true) })
		b.Run(fmt.Sprintf("saga-nomirror/callers=%d", callers), func(b *testing.B) { benchSaga(b, callers, false) })
		b.Run(fmt.Sprintf("noop/callers=%d", callers), func(b *testing.B) { benchNoop(b, callers) })
	}
}

func benchSaga(b *testing.B, callers int, mirrors bool) {
	f := setup(b)
	// The commit's own latency (the local activity: calendar re-check and
	// store commit) is reported beside the call's, to show where time goes.
	scope := tally.NewTestScope("", nil)
	f.acts.Metrics = scope
	if !mirrors {
		f.acts.Calendar, f.acts.CRM = nil, nil
	}
	// Callers book different properties and agents, as callers of a real
	// agency mostly do; one hot property would measure its lock queue.
	const pairs = 64
	for j := range pairs {
		for _, r := range []store.Resource{
			{ID: fmt.Sprintf("bench-p%02d", j), Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: fmt.Sprintf("bench-p%02d@calendar.test", j)},
			{ID: fmt.Sprintf("bench-a%02d", j), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"},
		} {
			require.NoError(b, f.acts.Store.UpsertResource(f.ctx, r))
		}
	}
	var next atomic.Int64
	base := slot(b, 8)
	measure(b, callers, func(ctx context.Context) error {
		// Each call books its own free slot: 30-minute steps through the
		// bookable hours, day after day, round the pairs.
		i := next.Add(1) - 1
		n := i / pairs
		start := base.AddDate(0, 0, int(n/24)).Add(time.Duration(n%24) * 30 * time.Minute)
		req := commitRequest(start)
		req.Intent.PropertyID, req.Intent.AgentID = fmt.Sprintf("bench-p%02d", i%pairs), fmt.Sprintf("bench-a%02d", i%pairs)
		r, err := workflows.Commit(ctx, f.client, f.queue, workflows.BookingInput{RequestKey: uuid.NewString()}, req)
		if err == nil && r.Status != receipt.StatusConfirmed {
			err = fmt.Errorf("booking %d: %s", i, r.Status)
		}
		return err
	})
	var commits []time.Duration
	for _, t := range scope.Snapshot().Timers() {
		commits = append(commits, t.Values()...)
	}
	require.NotEmpty(b, commits)
	slices.Sort(commits)
	b.ReportMetric(float64(commits[len(commits)/2].Microseconds())/1000, "commit-p50-ms")
}

func benchNoop(b *testing.B, callers int) {
	c := temporalServer().GetDefaultClient()
	queue := "bench-noop-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(noopBooking, workflow.RegisterOptions{Name: "NoopBooking"})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	measure(b, callers, func(ctx context.Context) error {
		op := c.NewWithStartWorkflowOperation(workflows.StartOptions(uuid.NewString(), queue), "NoopBooking", workflows.BookingInput{})
		h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: workflows.UpdateCommit, Args: []any{workflows.CommitRequest{}},
				WaitForStage: client.WorkflowUpdateStageCompleted}})
		if err != nil {
			return err
		}
		var r receipt.Receipt
		return h.Get(ctx, &r)
	})
}

// measure runs b.N calls spread over callers goroutines and reports the
// latency percentiles of single calls.
func measure(b *testing.B, callers int, call func(context.Context) error) {
	ctx := context.Background()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	b.ResetTimer()
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := call(ctx); err != nil {
					failed.Store(&err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(0, "ns/op")
}
