package sagaclient

import (
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
)

// ErrOverloaded means a booking call was not sent: as many as the client
// admits are in flight already (booking.ErrOverloaded).
var ErrOverloaded = booking.ErrOverloaded

// gate admits a booking call to Temporal only while fewer than its limit
// are in flight. Past saturation every admitted call would wait the whole
// commit wait to hear pending_reconciliation and slow the others down;
// refusing the excess at once, before anything is sent, keeps the
// admitted ones within the commit wait and tells the rest the truth (not
// sent, try again) within milliseconds. It never waits for a slot.
//
// The limit adapts, between minLimit and the configured bound, to how long
// admitted calls take: one that took more than half the commit wait lowers
// it by a tenth (throughput falls under overload, so the same number in
// flight then means longer waits); one that took less than a quarter, while
// the gate was full, raises it by one.
type gate struct {
	mu         sync.Mutex
	inFlight   int
	limit, max int
	slow, fast time.Duration
	report     func(int)
}

// minLimit is the fewest calls the gate admits, however slow they are.
const minLimit = 4

func newGate(limit int, commitWait time.Duration, report func(int)) *gate {
	if limit <= 0 {
		return nil
	}
	return &gate{limit: limit, max: limit, slow: commitWait / 2, fast: commitWait / 4, report: report}
}

// enter takes a slot, or reports none free.
func (g *gate) enter() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	if g.inFlight >= g.limit {
		g.mu.Unlock()
		return false
	}
	g.inFlight++
	g.changed(g.inFlight) // under the lock: the gauge sees the counts in order
	g.mu.Unlock()
	return true
}

// leave frees the slot enter took, for a call sent at sent.
func (g *gate) leave(sent time.Time) { g.done(time.Since(sent)) }

// done frees a slot for a call that took took.
func (g *gate) done(took time.Duration) {
	if g == nil {
		return
	}
	g.mu.Lock()
	full := g.inFlight >= g.limit
	g.inFlight--
	switch {
	case took > g.slow:
		g.limit = max(min(minLimit, g.max), g.limit-max(1, g.limit/10))
	case took < g.fast && full:
		g.limit = min(g.max, g.limit+1)
	}
	g.changed(g.inFlight)
	g.mu.Unlock()
}

func (g *gate) changed(n int) {
	if g.report != nil {
		g.report(n)
	}
}
