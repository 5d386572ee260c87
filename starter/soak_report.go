package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/receipt"
)

// soakRow is one rate's result.
type soakRow struct {
	rate           float64
	calls, errors  int
	pending        float64
	p50, p95, p99  time.Duration
	lagP50, lagP99 time.Duration
	mirrored       int
	throughput     float64
	// notSent is the share answered "not sent" (shed), and notSentP99
	// how long those answers took.
	notSent    float64
	notSentP99 time.Duration
	// failedOver counts calls sent again to another API.
	failedOver int
}

// commitWait is the voice budget a p99 must stay under.
const commitWait = 3 * time.Second

// saturated: the rate's p99 passed the commit wait, or calls failed.
func (r soakRow) saturated() bool {
	return r.p99 >= commitWait || r.calls == 0 || float64(r.errors) > 0.01*float64(r.calls)
}

func summarise(rate float64, took time.Duration, all []sample) soakRow {
	row := soakRow{rate: rate, calls: len(all), throughput: float64(len(all)) / took.Seconds()}
	var lat, lags, shed []time.Duration
	pending := 0
	for _, s := range all {
		lat = append(lat, s.latency)
		if s.notSent {
			shed = append(shed, s.latency)
		}
		if s.err {
			row.errors++
		}
		if s.failedOver {
			row.failedOver++
		}
		if s.status == receipt.StatusPending {
			pending++
		}
		if s.mirrored {
			lags = append(lags, s.lag)
		}
	}
	slices.Sort(lat)
	slices.Sort(lags)
	row.p50, row.p95, row.p99 = pct(lat, 50), pct(lat, 95), pct(lat, 99)
	row.lagP50, row.lagP99, row.mirrored = pct(lags, 50), pct(lags, 99), len(lags)
	slices.Sort(shed)
	row.notSentP99 = pct(shed, 99)
	if len(all) > 0 {
		row.pending = float64(pending) / float64(len(all))
		row.notSent = float64(len(shed)) / float64(len(all))
	}
	return row
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// saturation is the highest rate whose p99 stayed under the commit wait.
func saturation(rows []soakRow) float64 {
	best := 0.0
	for _, r := range rows {
		if !r.saturated() {
			best = max(best, r.rate)
		}
	}
	return best
}

func printSoak(out io.Writer, what string, rows []soakRow) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tarrivals/s\tcalls\tp50 ms\tp95 ms\tp99 ms\tpending\tnot sent\tnot sent p99 ms\tfailed over\terrors\tmirror lag p50 ms\tp99 ms\t\n", what)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }
	for _, r := range rows {
		lag50, lag99 := "-", "-"
		if r.mirrored > 0 {
			lag50, lag99 = ms(r.lagP50), ms(r.lagP99)
		}
		fmt.Fprintf(tw, "\t%.0f\t%d\t%s\t%s\t%s\t%.1f%%\t%.1f%%\t%s\t%d\t%d\t%s\t%s\t\n", r.rate, r.calls, ms(r.p50), ms(r.p95), ms(r.p99),
			100*r.pending, 100*r.notSent, ms(r.notSentP99), r.failedOver, r.errors, lag50, lag99)
	}
	tw.Flush()
}

// noopLoad is the yardstick: a workflow that answers one update and ends,
// started with Update-with-Start like a booking, on a worker in this
// process, against the same Temporal server.
type noopLoad struct {
	tc    client.Client
	queue string
}

const noopWorkflow = "SoakNoop"

// soakNoop answers its update and ends.
func soakNoop(ctx workflow.Context) error {
	done := false
	if err := workflow.SetUpdateHandler(ctx, "noop", func(workflow.Context) error { done = true; return nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done && workflow.AllHandlersFinished(ctx) })
}

func (n *noopLoad) start() (func(), error) {
	n.queue = "soak-noop-" + uuid.NewString()
	w := worker.New(n.tc, n.queue, worker.Options{})
	w.RegisterWorkflowWithOptions(soakNoop, workflow.RegisterOptions{Name: noopWorkflow})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start no-op worker: %w", err)
	}
	return w.Stop, nil
}

func (n *noopLoad) arrive(ctx context.Context, at time.Time) []sample {
	op := n.tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: "soak-noop-" + uuid.NewString(), TaskQueue: n.queue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, noopWorkflow)
	h, err := n.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: "noop", WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	return []sample{{latency: time.Since(at), err: err != nil, status: receipt.StatusConfirmed}}
}
