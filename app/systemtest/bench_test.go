package systemtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
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
//   - "noop": a workflow whose update answers at once, the engine's floor;
//   - "saga+text": the saga for a caller who agreed to a text, which the
//     queue's sender sends through a fake Twilio after the answer: what
//     the caller's messages cost the call, which must not wait for them.
//
// Run with
//
//	go test ./app/systemtest -run '^$' -bench ToolCallToReceipt -benchtime 800x
func BenchmarkToolCallToReceipt(b *testing.B) {
	for _, callers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) { benchToolCall(b, callers) })
	}
}

// phases is how many slices each kind's b.N calls are run in. The kinds
// take turns, in the order saga, commit-only, noop and then back, so a
// noisy machine's drift falls on all of them about equally. Between phases the
// benchmark waits, untimed, until the calls just made have done all their
// work, so no phase pays for another's.
const phases = 4

// call is one tool call, from the request to the receipt.
type call func(context.Context) error

// kind is one kind of call and the latencies it measured.
type kind struct {
	name  string
	queue string
	// settled narrows the visibility query that counts a call's workflow
	// as done with its work: the saga's mirrors are written and published.
	settled string
	call    call
	made    int
	lat     []time.Duration
	wall    time.Duration
}

func benchToolCall(b *testing.B, callers int) {
	f := setup(b)
	since := time.Now()
	// Each kind's commits report to their own scope: the local activity's
	// own latency (calendar re-check and store commit) shows where time goes.
	sagaCommits, onlyCommits := tally.NewTestScope("", nil), tally.NewTestScope("", nil)
	f.acts.Metrics = sagaCommits
	only := &activities.Activities{Store: f.acts.Store, Calendar: f.acts.Calendar, CRM: f.acts.CRM, Metrics: onlyCommits}
	book := f.benchBooker()
	onlyQueue, noopQueue := benchWorker(b, f.client, commitOnly(only)), benchWorker(b, f.client, noopBooking)
	textQueue := f.textingQueue(b)
	mirrored := fmt.Sprintf(" AND %s = true AND %s = true", visibility.AttrCalendarSynced.GetName(), visibility.AttrCRMSynced.GetName())
	kinds := []*kind{
		{name: "saga", queue: f.queue, call: book(f.queue, false), settled: mirrored},
		{name: "saga+text", queue: textQueue, call: book(textQueue, true),
			settled: mirrored + fmt.Sprintf(" AND %s = true", visibility.AttrCallerNotified.GetName())},
		{name: "commit-only", queue: onlyQueue, call: book(onlyQueue, false)},
		{name: "noop", queue: noopQueue, call: noopCall(f.client, noopQueue)},
	}
	for _, k := range kinds { // a first, untimed call warms each task queue
		require.NoError(b, k.call(b.Context()), k.name)
		k.made++
		k.settle(b, f.client, since)
	}
	runPhases(b, f.client, kinds, callers, since)
	report(b, kinds, map[string]tally.TestScope{"saga-commit-p50-ms": sagaCommits, "commit-only-commit-p50-ms": onlyCommits})
}

// runPhases makes b.N calls of each kind, in turns, each phase settled
// before the next starts.
func runPhases(b *testing.B, c client.Client, kinds []*kind, callers int, since time.Time) {
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
			require.NoError(b, k.run(b.Context(), callers, n), k.name)
			k.settle(b, c, since)
		}
	}
}

// settle waits until every call made so far has its workflow done with
// what it does after answering, as the server's visibility store sees it.
func (k *kind) settle(b *testing.B, c client.Client, since time.Time) {
	query := fmt.Sprintf("TaskQueue = %q AND StartTime >= %q%s", k.queue, since.UTC().Format(time.RFC3339Nano), k.settled)
	require.Eventually(b, func() bool {
		resp, err := c.CountWorkflow(b.Context(), &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		return err == nil && resp.GetCount() >= int64(k.made)
	}, time.Minute, 20*time.Millisecond, "%s: calls not settled", k.name)
}

// benchBooker seeds the properties and agents the callers book, and returns
// a call that books a fresh free slot through the given task queue.
func (f *fixture) benchBooker() func(queue string, texted bool) call {
	// Callers book different properties and agents, as callers of a real
	// agency mostly do; one hot property would measure its lock queue.
	const pairs = 64
	for j := range pairs {
		for _, r := range []booking.Resource{
			{ID: fmt.Sprintf("bench-p%02d", j), Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: fmt.Sprintf("bench-p%02d@calendar.test", j)},
			{ID: fmt.Sprintf("bench-a%02d", j), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"},
		} {
			require.NoError(f.t, f.acts.Store.UpsertResource(f.ctx, r))
		}
	}
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(f.t, err)
	day := slot(f.t, 8).In(loc)
	var next atomic.Int64
	return func(queue string, texted bool) call {
		return func(ctx context.Context) error {
			// Each call books its own free slot: 30-minute steps through
			// the bookable hours (08:00 to 20:00 in Paris, whatever the
			// day's UTC offset), day after day, round the pairs.
			i := next.Add(1) - 1
			n := int(i / pairs)
			start := time.Date(day.Year(), day.Month(), day.Day()+n/24, 8, 30*(n%24), 0, 0, loc).UTC()
			req := commitRequest(start)
			req.Intent.PropertyID, req.Intent.AgentID = fmt.Sprintf("bench-p%02d", i%pairs), fmt.Sprintf("bench-a%02d", i%pairs)
			key := uuid.NewString()
			if texted { // sealed first, as the API seals it
				sealed, err := f.acts.Store.SealContact(ctx, key, booking.Contact{Phone: "+33612345678", Notify: booking.ChannelSMS, Lang: "en"}, "Europe/Paris")
				if err != nil {
					return err
				}
				req.Contact = sealed
			}
			r, err := sagaclient.New(f.client, sagaclient.Options{TaskQueue: queue, Margin: time.Minute}).Commit(ctx, key, req)
			if err == nil && r.Status != receipt.StatusConfirmed {
				err = fmt.Errorf("booking %d: %s", i, r.Status)
			}
			return err
		}
	}
}

// textingQueue runs a second worker of the real activities on a queue of
// its own, texting callers through a fake Twilio, with its sender.
func (f *fixture) textingQueue(b *testing.B) string {
	fake := smstest.New(twilioAccount, twilioToken)
	srv := httptest.NewServer(fake)
	b.Cleanup(func() { fake.Release(); srv.Close() })
	texts, err := sms.New(sms.Config{AccountSid: twilioAccount, AuthToken: twilioToken, From: "+33700000000", Endpoint: srv.URL})
	require.NoError(b, err)
	acts := &activities.Activities{Store: f.acts.Store, Calendar: f.acts.Calendar, CRM: f.acts.CRM, Temporal: f.client, SMS: texts}
	queue := "bench-text-" + uuid.NewString()
	w := worker.New(f.client, queue, worker.Options{})
	app.Register(w, acts)
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	require.NoError(b, activities.EnsureMessages(b.Context(), f.client, queue))
	b.Cleanup(func() {
		_ = f.client.TerminateWorkflow(context.Background(), booking.MessagesIDPrefix+queue, "", "the benchmark is over")
	})
	return queue
}

// benchWorker runs wf as the booking workflow on a task queue of its own.
func benchWorker(b *testing.B, c client.Client, wf func(workflow.Context, workflows.BookingInput) error) string {
	queue := "bench-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: booking.BookingWorkflowName})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	return queue
}

// answering is a workflow that answers each commit update with handle and
// otherwise waits, as the saga does while the viewing is ahead.
func answering(handle func(workflow.Context, workflows.BookingInput, booking.CommitRequest) (receipt.Receipt, error)) func(workflow.Context, workflows.BookingInput) error {
	return func(ctx workflow.Context, in workflows.BookingInput) error {
		if err := workflow.SetUpdateHandler(ctx, booking.UpdateCommit, func(ctx workflow.Context, req booking.CommitRequest) (receipt.Receipt, error) {
			return handle(ctx, in, req)
		}); err != nil {
			return err
		}
		return workflow.Await(ctx, func() bool { return false })
	}
}

// noopBooking is the engine's floor: a workflow whose commit update answers
// at once, started the same way (Update-with-Start) on the same server.
var noopBooking = answering(func(workflow.Context, workflows.BookingInput, booking.CommitRequest) (receipt.Receipt, error) {
	return receipt.Receipt{Status: receipt.StatusConfirmed}, nil
})

// commitOnly is the floor plus the commit alone: its update runs the
// saga's commit local activity, with the saga's options, and answers.
func commitOnly(acts *activities.Activities) func(workflow.Context, workflows.BookingInput) error {
	return answering(func(ctx workflow.Context, in workflows.BookingInput, req booking.CommitRequest) (receipt.Receipt, error) {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 3 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var out booking.CommitOutput
		if err := workflow.ExecuteLocalActivity(lctx, acts.Commit, booking.CommitInput{CommitRequest: booking.CommitRequest{RequestKey: in.RequestKey,
			Intent: req.Intent, ExpectedPolicyVersion: req.ExpectedPolicyVersion}}).Get(ctx, &out); err != nil {
			return receipt.Receipt{}, err
		}
		return receipt.Receipt{Status: receipt.StatusConfirmed, BookingID: out.Booking.BookingID.String()}, nil
	})
}

// noopCall starts a no-op workflow and waits for its update's answer.
func noopCall(c client.Client, queue string) call {
	return func(ctx context.Context) error {
		op := c.NewWithStartWorkflowOperation(sagaclient.StartOptions(ctx, uuid.NewString(), queue), booking.BookingWorkflowName, workflows.BookingInput{})
		h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: booking.UpdateCommit, Args: []any{booking.CommitRequest{}},
				WaitForStage: client.WorkflowUpdateStageCompleted}})
		if err != nil {
			return err
		}
		var r receipt.Receipt
		return h.Get(ctx, &r)
	}
}

// run makes n calls from callers closed-loop goroutines and keeps each
// call's latency.
func (k *kind) run(ctx context.Context, callers, n int) error {
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
	k.made += n
	k.lat = append(k.lat, lat...)
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// report gives each kind's p50, p99 and calls per second, the p50 ratios
// against the floor (the last kind), and each commit scope's p50.
func report(b *testing.B, kinds []*kind, commits map[string]tally.TestScope) {
	floor := kinds[len(kinds)-1]
	slices.Sort(floor.lat)
	for _, k := range kinds {
		slices.Sort(k.lat)
		b.ReportMetric(ms(percentile(k.lat, 50)), k.name+"-p50-ms")
		b.ReportMetric(ms(percentile(k.lat, 99)), k.name+"-p99-ms")
		b.ReportMetric(float64(len(k.lat))/k.wall.Seconds(), k.name+"-calls/s")
		if k != floor {
			b.ReportMetric(ms(percentile(k.lat, 50))/ms(percentile(floor.lat, 50)), k.name+"/"+floor.name)
		}
	}
	for unit, scope := range commits {
		var d []time.Duration
		for _, t := range scope.Snapshot().Timers() {
			d = append(d, t.Values()...)
		}
		require.NotEmpty(b, d, unit)
		slices.Sort(d)
		b.ReportMetric(ms(percentile(d, 50)), unit)
	}
	b.ReportMetric(0, "ns/op")
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)*p+99)/100-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
