package activities

import (
	"context"
	"sync"
	"time"
)

// commitsFirst lets the commits a worker runs (Commit, Confirm, and the
// Release of a cancel) go before its mirror work. A commit is what a
// caller is waiting on; a calendar or CRM write, or a text, only follows
// a decision already told. On a saturated box they share the same cores
// and the same pool of store connections, so a mirror that starts while
// commits are in flight waits for a moment with none, within its yield
// budget (kept well inside the mirrors' lag target), and then goes ahead
// regardless: it never waits for good. The saga's first try of a mirror
// is a local activity, so while it yields the saga's workflow task is
// held: an update or query on that one saga waits up to the budget
// longer, which is why the budget is bounded well under MirrorFirstTry.
//
// The zero value is ready: no commit in flight, nobody waiting.
type commitsFirst struct {
	mu      sync.Mutex
	running int
	// idle is closed when running falls back to 0, waking the mirrors
	// that yielded; a new one is made when a commit starts on an idle
	// worker.
	idle    chan struct{}
	waiting int
}

// begin marks a commit in flight until the function it returns is called.
func (g *commitsFirst) begin() (end func()) {
	g.mu.Lock()
	if g.running == 0 {
		g.idle = make(chan struct{})
	}
	g.running++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.running--
			if g.running == 0 {
				close(g.idle)
			}
			g.mu.Unlock()
		})
	}
}

// yielded is why a mirror's wait ended.
type yielded string

const (
	yieldNone    yielded = "none"    // no commit was in flight
	yieldIdle    yielded = "idle"    // the commits in flight finished
	yieldBudget  yielded = "budget"  // the budget ran out first
	yieldStopped yielded = "stopped" // the activity's context ended
)

// wait returns at once when no commit is in flight; else when none is,
// when budget fires, or when ctx ends, whichever comes first.
func (g *commitsFirst) wait(ctx context.Context, budget <-chan time.Time) yielded {
	g.mu.Lock()
	if g.running == 0 {
		g.mu.Unlock()
		return yieldNone
	}
	idle := g.idle
	g.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-idle:
		return yieldIdle
	case <-budget:
		return yieldBudget
	case <-ctx.Done():
		return yieldStopped
	}
}

// yieldToCommits holds a mirror's work while this worker's commits run,
// for MirrorYield at most, and records how long it held it. A context
// that ends meanwhile is the activity's own timeout: the work that
// follows fails on it and is retried as every mirror write is.
func (a *Activities) yieldToCommits(ctx context.Context) {
	if a.MirrorYield <= 0 {
		return
	}
	start := time.Now()
	budget := time.NewTimer(a.MirrorYield)
	defer budget.Stop()
	why := a.turns.wait(ctx, budget.C)
	if why != yieldNone {
		a.histograms().Tagged(map[string]string{"ended": string(why)}).Timer("mirror_yield").Record(time.Since(start))
	}
}
