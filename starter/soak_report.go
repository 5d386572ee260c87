package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/internal/yardstick"
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
	// admittedP95 and admittedP99 are the calls not shed: what a caller
	// whose call was taken waited; confirmed is confirmed answers a second.
	admittedP95, admittedP99 time.Duration
	// sentLateP95 is how late the admitted calls left the soak after
	// their scheduled arrival, and fromSentP95 what they took from then:
	// on a box the soak shares, the first is its own wait for a core.
	sentLateP95, fromSentP95 time.Duration
	confirmed                float64
	confirmedCalls           int
	// cpu is each process's core-milliseconds per confirmed answer.
	cpu []string
}

// commitWait is the voice budget a p99 must stay under.
const commitWait = 3 * time.Second

// saturated: the p99 of the calls admitted passed the commit wait, or
// calls failed. (Calls shed are answered at once; admission keeps the p99
// of all calls low past saturation, so it can't tell.)
func (r soakRow) saturated() bool {
	return r.admittedP99 >= commitWait || !r.answered()
}

// answered: calls were made and no more than 1 % of them failed.
func (r soakRow) answered() bool {
	return r.calls > 0 && float64(r.errors) <= 0.01*float64(r.calls)
}

func summarise(rate float64, took time.Duration, all []sample) soakRow {
	row := soakRow{rate: rate, calls: len(all), throughput: float64(len(all)) / took.Seconds()}
	var lat, lags, shed, admitted, late, fromSent []time.Duration
	pending, confirmed := 0, 0
	for _, s := range all {
		lat = append(lat, s.latency)
		if s.notSent {
			shed = append(shed, s.latency)
		} else {
			admitted = append(admitted, s.latency)
			late, fromSent = append(late, s.late), append(fromSent, s.latency-s.late)
		}
		if s.status == receipt.StatusConfirmed {
			confirmed++
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
	slices.Sort(admitted)
	row.admittedP95, row.admittedP99 = pct(admitted, 95), pct(admitted, 99)
	slices.Sort(late)
	slices.Sort(fromSent)
	row.sentLateP95, row.fromSentP95 = pct(late, 95), pct(fromSent, 95)
	row.confirmed, row.confirmedCalls = float64(confirmed)/took.Seconds(), confirmed
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

// saturation is the most confirmed answers a second of any rate whose
// calls were answered. A rate past the commit wait counts: the no-op's
// ladder doubles and stops at the first such rate, and leaving it out
// could halve what the engine was seen to confirm.
func saturation(rows []soakRow) float64 {
	best := 0.0
	for _, r := range rows {
		if r.answered() {
			best = max(best, r.confirmed)
		}
	}
	return best
}

func printSoak(out io.Writer, what string, rows []soakRow) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tarrivals/s\tcalls\tp50 ms\tp95 ms\tp99 ms\tadmitted p95 ms\tp99 ms\tsent late p95 ms\tfrom send p95 ms\tpending\tnot sent\tnot sent p99 ms\tconfirmed/s\tfailed over\terrors\tmirror lag p50 ms\tp99 ms\tcore-ms per confirmed\t\n", what)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }
	for _, r := range rows {
		lag50, lag99 := "-", "-"
		if r.mirrored > 0 {
			lag50, lag99 = ms(r.lagP50), ms(r.lagP99)
		}
		fmt.Fprintf(tw, "\t%.0f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.1f%%\t%s\t%.1f\t%d\t%d\t%s\t%s\t%s\t\n", r.rate, r.calls, ms(r.p50), ms(r.p95), ms(r.p99),
			ms(r.admittedP95), ms(r.admittedP99), ms(r.sentLateP95), ms(r.fromSentP95), 100*r.pending, 100*r.notSent, ms(r.notSentP99), r.confirmed, r.failedOver, r.errors, lag50, lag99,
			strings.Join(r.cpu, ", "))
	}
	tw.Flush()
}

// yardstickLoad calls one of the yardsticks (the no-op, the saga's
// shape), started with Update-with-Start like a booking, on a worker in
// this process, against the same Temporal server.
type yardstickLoad struct {
	tc       client.Client
	workflow string
	queue    string
}

// climbYardstick runs the yardstick wf from rate, doubling it until it
// saturates, and prints each rate as it ends.
func climbYardstick(ctx context.Context, tc client.Client, wf, what string, rate float64, per time.Duration, cpu *procCPU, out io.Writer) ([]soakRow, error) {
	n := &yardstickLoad{tc: tc, workflow: wf}
	stop, err := n.start()
	if err != nil {
		return nil, err
	}
	var rows []soakRow
	for ; ctx.Err() == nil && rate <= 4000; rate *= 2 {
		rows = append(rows, cpu.over(func() soakRow { return runOpenLoop(ctx, rate, per, n.arrive) }))
		printSoak(out, what, rows[len(rows)-1:])
		if rows[len(rows)-1].saturated() {
			break
		}
		pause(ctx)
	}
	stop()
	pause(ctx)
	return rows, nil
}

func (n *yardstickLoad) start() (func(), error) {
	n.queue = "soak-yardstick-" + uuid.NewString()
	w := worker.New(n.tc, n.queue, worker.Options{})
	yardstick.Register(w)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start yardstick worker: %w", err)
	}
	return w.Stop, nil
}

func (n *yardstickLoad) arrive(ctx context.Context, at time.Time) []sample {
	late := time.Since(at)
	op := n.tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: "soak-yardstick-" + uuid.NewString(), TaskQueue: n.queue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, n.workflow)
	h, err := n.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: yardstick.Update, WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	return []sample{{latency: time.Since(at), late: late, err: err != nil, status: receipt.StatusConfirmed}}
}
