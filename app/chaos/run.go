package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Options shape a run.
type Options struct {
	// Dir keeps the run's data and each process's log.
	Dir      string
	Binaries Binaries
	// Duration is how long callers book while the faults go on; each fault
	// has an equal share of it.
	Duration time.Duration
	Callers  int
	// Think bounds a caller's pause between calls.
	Think time.Duration
	// MirrorFaultRate is the share of calendar and CRM calls that fail,
	// lose their reply after saving, or lag.
	MirrorFaultRate float64
	// Outage is how long each broken process stays down.
	Outage time.Duration
	// Restore runs the restore campaign instead of the usual faults: the
	// store restored from a backup taken mid-load (restore.go).
	Restore bool
	// TemporalStore is where the Temporal server keeps its state:
	// devstack.StorePostgres (its own cluster, as deployments run it; the
	// default) or devstack.StoreSQLite.
	TemporalStore string
	// Flooders, when positive, is how many at once a second agent key
	// sends MCP writes, each minting a conversation, beside the callers:
	// the edge must keep it to its share and let the callers in.
	Flooders int
	// SecondAgency adds callers of a second agency (secondAgency), with
	// a key, a catalogue (the same resource ids), calendars and mailboxes
	// of its own: the checks then hold each agency to its own rows,
	// events, meetings and messages. Not with Restore.
	SecondAgency bool
	Seed         uint64
	Progress     io.Writer
}

func (o Options) validate() error {
	switch {
	case o.Dir == "" || o.Binaries.Worker == "" || o.Binaries.Starter == "" || len(o.Binaries.Temporal) == 0:
		return errors.New("chaos: a directory and the worker, starter and temporal commands are required")
	case o.SecondAgency && o.Restore:
		return errors.New("chaos: the restore campaign runs with one agency")
	case o.Duration < 10*time.Second || o.Callers < 1 || o.Outage <= 0:
		return fmt.Errorf("chaos: duration %s must be at least 10s, with callers %d >= 1 and a positive outage", o.Duration, o.Callers)
	case o.MirrorFaultRate < 0 || o.MirrorFaultRate > 1:
		return fmt.Errorf("chaos: mirror fault rate %v must be 0 to 1", o.MirrorFaultRate)
	case o.TemporalStore != "" && o.TemporalStore != devstack.StorePostgres && o.TemporalStore != devstack.StoreSQLite:
		return fmt.Errorf("chaos: temporal store must be %s or %s, got %q", devstack.StorePostgres, devstack.StoreSQLite, o.TemporalStore)
	}
	return nil
}

// FaultResult is one fault as it happened.
type FaultResult struct {
	Name         string
	At, Restored time.Time
	// Recovered is when the first booking was confirmed by a call sent
	// after the restore; zero if none was.
	Recovered time.Time
	// ConfirmedWhileDown counts bookings confirmed by calls sent and
	// answered while it lasted: with one pair down, the other serves.
	ConfirmedWhileDown int
}

// faultSpec breaks something and later mends it.
type faultSpec struct {
	name            string
	inject, restore func(ctx context.Context) error
	// outage overrides Options.Outage.
	outage time.Duration
}

// Run starts the processes, books under faults, lets everything recover,
// runs reconciliation once and checks the invariants.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.TemporalStore == "" {
		o.TemporalStore = devstack.StorePostgres
	}
	c, err := newCluster(o.Dir, o.Binaries, o.TemporalStore, o.SecondAgency)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	cat, pool, err := c.boot(ctx, o)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "chaos: %d callers over two APIs and two workers, Temporal on %s, for %s, mirror faults at %.0f%%, logs in %s\n",
		o.Callers, o.TemporalStore, o.Duration, 100*o.MirrorFaultRate, o.Dir)
	if err := c.mirrorFaults(o.MirrorFaultRate, o.Seed); err != nil {
		return nil, err
	}
	hist := &history{}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var callers sync.WaitGroup
	fl := &flood{urls: c.apiURLs(0), key: c.floodKey, cat: cat, http: &http.Client{Timeout: 10 * time.Second}}
	for i := range o.Callers {
		// The agencies take turns: caller i acts for the i-th, modulo.
		a := c.agencies[i%len(c.agencies)]
		cl := &caller{id: i, agency: a, urls: c.apiURLs(i), key: c.keys[a], http: &http.Client{Timeout: 10 * time.Second}, cat: cat,
			reply: func(key, body string) { c.textReply(a, i, key, body) }, link: func(key string) string { return c.linkOf(a, key) },
			hist: hist, think: o.Think, rng: rand.New(rand.NewPCG(o.Seed, uint64(i))), shed: &fl.callerShed}
		callers.Go(func() { cl.run(loadCtx) })
	}
	for i := range o.Flooders {
		callers.Go(func() { fl.run(loadCtx, i) })
	}
	faults, interrupts, err := c.inject(ctx, o)
	stopLoad()
	callers.Wait()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(o.Progress, "chaos: load stopped; recovering")
	rep, err := c.recover(ctx, pool, hist.all(), interrupts, o)
	if err != nil {
		return nil, err
	}
	rep.Faults, rep.Duration = recoveries(faults, hist.all()), o.Duration
	if o.Flooders > 0 {
		rep.Flood = fl.result(o.Flooders)
	}
	return rep, nil
}

// boot starts PostgreSQL, Temporal, two workers and two APIs, and seeds
// the catalogue.
func (c *cluster) boot(ctx context.Context, o Options) (catalogue, *pgxpool.Pool, error) {
	if err := c.startAll(ctx); err != nil {
		return catalogue{}, nil, err
	}
	pool, err := pgxpool.New(ctx, c.adminURL)
	if err != nil {
		return catalogue{}, nil, fmt.Errorf("connect database: %w", err)
	}
	c.pool = pool
	// The catalogue is written as the service writes, under the
	// agencies' row-level security.
	owner, err := pgxpool.New(ctx, c.dbURL)
	if err != nil {
		return catalogue{}, nil, fmt.Errorf("connect database: %w", err)
	}
	defer owner.Close()
	days := max(3, int(o.Duration/(2*time.Minute)))
	st := store.New(owner, store.Config{})
	cat, err := seed(ctx, st, days)
	if err == nil && o.SecondAgency {
		err = seedSecond(ctx, st, days, c.own[secondAgency])
	}
	if err == nil {
		err = c.registerWebhooks(ctx)
	}
	return cat, pool, err
}

// startAll starts the store, Temporal, and both pairs of workers and APIs.
func (c *cluster) startAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, start := range []func(context.Context) error{c.startPostgres, c.startTemporal,
		func(ctx context.Context) error { return c.startPair(ctx, "a") }, func(ctx context.Context) error { return c.startPair(ctx, "b") }} {
		if err := start(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) mirrorFaults(rate float64, seed uint64) error {
	kinds := []fakeserver.Fault{{Status: http.StatusServiceUnavailable}, {Status: http.StatusTooManyRequests, RetryAfter: time.Second},
		{DropAfterSave: true}, {Latency: 1500 * time.Millisecond}}
	// The callers' messages: Twilio's 5xx and 429, the SMTP server's 421
	// and 451, and the reply lost after either took the message.
	messages := []fakeserver.Fault{{Status: http.StatusServiceUnavailable}, {Status: http.StatusTooManyRequests}, {DropAfterSave: true}}
	errs := []error{c.fakes.inject(rate, kinds, messages, seed)}
	for _, id := range c.agencies {
		if f, ok := c.own[id]; ok {
			errs = append(errs, f.inject(rate, kinds, messages, seed+uint64(len(errs))*10))
		}
	}
	return errors.Join(errs...)
}

// faults are the process-level breakages, in the order a run applies them.
func (c *cluster) faults(o Options) []faultSpec {
	if o.Restore {
		return []faultSpec{c.restoreFault()}
	}
	// Each pair fault takes down one worker and one API while the other
	// pair serves; a caller whose API is gone turns to the other, as
	// behind a load balancer.
	restart := func(slot string) func(context.Context) error {
		return func(ctx context.Context) error { return c.startPair(ctx, slot) }
	}
	return []faultSpec{
		// Long enough that the pair left serves bookings while it lasts, not
		// only conflicts: a 3 s outage once confirmed nothing (about two
		// bookings a second are confirmed under the suite's load, most calls
		// racing for the same slots).
		{"kill -9 a worker and an API", func(context.Context) error {
			c.worker("a").kill()
			c.api("a").kill()
			return nil
		}, restart("a"), max(o.Outage, 6*time.Second)},
		{"PostgreSQL crash (immediate)", func(context.Context) error { c.crashPostgres(); return nil }, c.startPostgres, 0},
		// Longer than the commit wait: commits in flight time out with
		// their outcome unknown, and land when it thaws.
		{frozenFault, func(context.Context) error { return c.signalPostgres(syscall.SIGSTOP) },
			func(context.Context) error { return c.signalPostgres(syscall.SIGCONT) }, max(o.Outage, 5*time.Second)},
		{"Temporal server kill -9", func(context.Context) error { c.temporal.kill(); return nil }, c.startTemporal, 0},
		{deployFault, func(context.Context) error {
			var wg sync.WaitGroup
			var errAPI, errWorker error
			wg.Go(func() { errAPI = c.api("b").interrupt(20 * time.Second) })
			wg.Go(func() { errWorker = c.worker("b").interrupt(20 * time.Second) })
			wg.Wait()
			return errors.Join(errAPI, errWorker)
		}, restart("b"), 0},
	}
}

// deployFault is a rolling deploy's step: one worker and one API stopped
// by SIGINT, draining what they hold.
const deployFault = "SIGINT deploy (a worker and an API)"

// inject applies the faults in turn, under load, one every period until
// the run's duration is up: a short run meets each once, a long one many
// times.
func (c *cluster) inject(ctx context.Context, o Options) ([]FaultResult, []time.Time, error) {
	specs := c.faults(o)
	period := min(o.Duration/time.Duration(len(specs)), 40*time.Second)
	began := time.Now()
	var results []FaultResult
	var interrupts []time.Time
	for i := 0; time.Duration(i+1)*period <= o.Duration; i++ {
		f := specs[i%len(specs)]
		if err := sleep(ctx, time.Until(began.Add(time.Duration(i)*period+period/3))); err != nil {
			return results, interrupts, err
		}
		r := FaultResult{Name: f.name, At: time.Now()}
		fmt.Fprintf(o.Progress, "chaos: %s %s\n", r.At.Format(time.TimeOnly), f.name)
		if f.name == deployFault {
			interrupts = append(interrupts, r.At)
		}
		if err := f.inject(ctx); err != nil {
			return results, interrupts, fmt.Errorf("inject %s: %w", f.name, err)
		}
		outage := o.Outage
		if f.outage > 0 {
			outage = f.outage
		}
		if err := sleep(ctx, outage); err != nil {
			return results, interrupts, err
		}
		restoreCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := f.restore(restoreCtx)
		cancel()
		if err != nil {
			return results, interrupts, fmt.Errorf("restore after %s: %w", f.name, err)
		}
		r.Restored = time.Now()
		results = append(results, r)
	}
	// Load goes on for a while after the last restore, however late it
	// came on a slow machine, so that every fault's recovery is seen.
	end := began.Add(o.Duration)
	if n := len(results); n > 0 {
		end = later(end, results[n-1].Restored.Add(10*time.Second))
	}
	return results, interrupts, sleep(ctx, time.Until(end))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// recover brings everything up with the mirrors mended, runs one
// reconciliation, and checks until the invariants hold or a deadline.
func (c *cluster) recover(ctx context.Context, pool *pgxpool.Pool, calls []Call, interrupts []time.Time, o Options) (*Report, error) {
	if err := c.mirrorFaults(0, 0); err != nil {
		return nil, err
	}
	upCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := c.ensureUp(upCtx); err != nil {
		return nil, err
	}
	recovering := time.Now()
	if err := c.reconcile(upCtx, o); err != nil {
		return nil, err
	}
	var lost []Invariant
	var refusedLost map[string]bool
	if o.Restore {
		var summary string
		var err error
		if lost, summary, refusedLost, err = c.lostBookings(upCtx, pool, calls); err != nil {
			return nil, err
		}
		fmt.Fprintln(o.Progress, "chaos: "+summary)
		if err := c.reconcile(upCtx, o); err != nil { // the restored bookings' mirrors, and the refused ones' events
			return nil, err
		}
	}
	// The first read asks the API about every key; later ones only about
	// those not settled yet, so that a long run's checks keep up.
	var final map[string]*receipt.Receipt
	var deadline time.Time
	reconciled := time.Now()
	for {
		ch, err := c.read(ctx, pool, calls, interrupts, final)
		if err != nil {
			return nil, err
		}
		ch.refusedLost = refusedLost
		if deadline.IsZero() {
			deadline = time.Now().Add(2 * time.Minute)
		}
		rep := &Report{Calls: calls, Invariants: append(ch.check(), lost...), Settled: time.Since(recovering),
			Texts: ch.messages.texts, Mails: ch.messages.mails, Stops: len(ch.messages.stopped), Answers: len(ch.messages.answers),
			TextCopies: ch.messages.textCopies, MailCopies: ch.messages.mailCopies,
			Meetings: countAll(ch.meetings), Contacts: countAll(ch.contacts), Hooks: ch.hookCounts(), Confirmed: ch.confirmedByAgency()}
		if rep.OK() || !ch.settling() || time.Now().After(deadline) {
			return rep, ch.writeViolations(filepath.Join(c.dir, "violations.txt"), rep.Invariants)
		}
		final = ch.settledAnswers()
		if (len(ch.mirrors()) > 0 || len(ch.nonePending()) > 0) && time.Since(reconciled) > mirrorRerun {
			// A mirror write that raced the run's repair lands after it
			// (it read the store before the operator's change), and a call
			// answered pending whose resend was pending again waits for
			// the next run: the schedule's next run settles both, as this
			// one does.
			if err := c.reconcile(ctx, o); err != nil {
				return nil, err
			}
			reconciled = time.Now()
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return nil, err
		}
	}
}

// mirrorRerun is how long the checks wait for lagging mirrors before they
// run reconciliation again, as its schedule would.
const mirrorRerun = 30 * time.Second

// reconcile runs the Reconcile workflow once and waits for it.
func (c *cluster) reconcile(ctx context.Context, o Options) error {
	tc, err := client.Dial(client.Options{HostPort: c.temporalAddr, Namespace: Namespace, Logger: zaplog.New(zap.NewNop())})
	if err != nil {
		return fmt.Errorf("connect temporal: %w", err)
	}
	defer tc.Close()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("chaos-reconcile-%d", time.Now().UnixNano()),
		TaskQueue: booking.TaskQueue}, booking.ReconcileWorkflowName,
		workflows.ReconcileInput{Window: 60 * 24 * time.Hour, StuckAfter: time.Second})
	if err != nil {
		return fmt.Errorf("start reconciliation: %w", err)
	}
	var rep workflows.ReconcileReport
	if err := run.Get(ctx, &rep); err != nil {
		return fmt.Errorf("reconciliation: %w", err)
	}
	fmt.Fprintf(o.Progress, "chaos: reconciliation: %+v\n", rep)
	return nil
}
