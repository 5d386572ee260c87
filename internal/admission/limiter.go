// Package admission decides, at the agent edge, whether a call is sent on
// or answered at once "not sent, try again": a concurrency limit that
// follows the service's own latency against what a caller on the phone
// can bear.
//
// The law is a gradient, as Netflix's concurrency-limits and Envoy's
// adaptive concurrency filter use: each window of answered calls gives a
// p95; over the aim, the limit shrinks in proportion (limit × aim/p95,
// at most halved at once); at or under it, with calls turned away in the
// window, it grows by its square root, and with none, it comes down to
// twice the most calls the window had in flight at once, or a burst's
// room (so that a surge after light load is let in in proportion, not up
// to the maximum). The aim is the target, unless the
// service is slower than half of it even unloaded (its floor, the best
// window's median): then twice the floor, so that a slow deployment is
// run at its best rather than starved to the minimum. Past saturation the
// limit settles where admitted calls meet the aim, and the rest are
// refused before they cost anything.
package admission

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Config is a limiter's law.
type Config struct {
	// Target is the p95 of admitted calls aimed at: a voice platform has
	// 300 to 500 ms of silence before its agent must say something.
	Target time.Duration
	// Max bounds the limit, and is where it starts; Min is the fewest
	// calls admitted at once, however slow they are.
	Max, Min int
	// Window is how many answered calls make one p95.
	Window int
	// OnInFlight, when set, is told the calls in flight each time they
	// change, in order, under the limiter's lock: it must not block.
	OnInFlight func(n int)
	// OnLimit, when set, is told the limit each time a window closes.
	OnLimit func(n int)
}

// Limiter admits calls while fewer than its limit are in flight. It never
// queues: a call over the limit is refused at once. Nil admits all.
type Limiter struct {
	cfg Config

	mu       sync.Mutex
	limit    float64
	inFlight int
	samples  []time.Duration
	byKey    map[string]int // calls in flight per API key
	refused  bool           // a call was turned away in this window
	peak     int            // the most calls in flight at once in this window
	floor    time.Duration  // the best window's median
}

// burstRoom is the least room light load leaves: callers racing for one
// slot, and a resent call, arrive together.
const burstRoom = 8

// DefaultTarget is the p95 aimed at unless configured.
const DefaultTarget = 300 * time.Millisecond

// New is a limiter following cfg; a Max of zero or less is no limiter
// (nil), which admits every call.
func New(cfg Config) *Limiter {
	if cfg.Max <= 0 {
		return nil
	}
	if cfg.Target <= 0 {
		cfg.Target = DefaultTarget
	}
	cfg.Min = min(max(cfg.Min, 1), cfg.Max)
	if cfg.Window <= 0 {
		cfg.Window = 20
	}
	return &Limiter{cfg: cfg, limit: float64(cfg.Max)}
}

// Enter takes a place for a call under an API key, or reports none free;
// a call admitted must be answered with Done, with its key and how long
// it took. A key holds at most its share (share): one key flooding the
// edge is turned away while another's calls are still let in.
func (l *Limiter) Enter(key string) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight >= int(l.limit) || l.byKey[key] >= l.share(key) {
		l.refused = true
		return false
	}
	if l.byKey == nil {
		l.byKey = map[string]int{}
	}
	l.byKey[key]++
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	l.told()
	return true
}

// share is the most places key may hold: an equal part of the limit
// among the keys holding places (key among them), and at least one. A
// key alone leaves a quarter free for a key that holds none yet; the
// limit grows while calls are turned away within the latency aim, so a
// deployment with one key loses no capacity it can serve.
func (l *Limiter) share(key string) int {
	keys := len(l.byKey)
	if l.byKey[key] == 0 {
		keys++
	}
	if keys == 1 {
		return max(1, int(l.limit-math.Floor(l.limit/4)))
	}
	return max(1, int(math.Ceil(l.limit/float64(keys))))
}

// Done gives back the place of a call under key that took took.
func (l *Limiter) Done(key string, took time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey[key]--; l.byKey[key] <= 0 {
		delete(l.byKey, key) // the map holds the keys with calls in flight, no more
	}
	l.inFlight--
	l.told()
	l.samples = append(l.samples, took)
	if len(l.samples) >= l.cfg.Window {
		l.adjust()
	}
}

// Limit is the number of calls admitted at once now; 0 for no limiter,
// which admits all.
func (l *Limiter) Limit() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return int(l.limit)
}

// adjust closes a window: the limit follows its p95 against the aim.
func (l *Limiter) adjust() {
	slices.Sort(l.samples)
	p95 := l.samples[(len(l.samples)*95+99)/100-1]
	median := l.samples[len(l.samples)/2]
	if l.floor == 0 || median < l.floor {
		l.floor = median
	}
	aim := max(l.cfg.Target, 2*l.floor)
	switch {
	case p95 > aim:
		l.limit *= max(0.5, float64(aim)/float64(p95))
	case l.refused:
		// Slower as p95 nears the aim, so that it settles rather than
		// overshoots by a whole step.
		l.limit += math.Sqrt(l.limit) * max(0.25, 1-float64(p95)/float64(aim))
	default:
		// Light load: room for twice what the window had at once (and a
		// burst's worth), no more, so that a surge is let in in
		// proportion to it, not up to Max, before a window can see the
		// aim passed.
		l.limit = min(l.limit, max(2*float64(l.peak), burstRoom))
	}
	l.limit = min(float64(l.cfg.Max), max(float64(l.cfg.Min), l.limit))
	l.samples, l.refused, l.peak = l.samples[:0], false, l.inFlight
	if l.cfg.OnLimit != nil {
		l.cfg.OnLimit(int(l.limit))
	}
}

func (l *Limiter) told() {
	if l.cfg.OnInFlight != nil {
		l.cfg.OnInFlight(l.inFlight)
	}
}
