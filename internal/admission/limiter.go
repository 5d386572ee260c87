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
	"cmp"
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
	byAgency map[string]int            // calls in flight per agency
	byKey    map[string]map[string]int // and per key, by agency
	first    string                    // the first agency seen
	agencies bool                      // more than one agency has called
	refused  bool                      // a call was turned away in this window
	peak     int                       // the most calls in flight at once in this window
	floor    time.Duration             // the best window's median
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

// Caller is who a call comes from: the agency its key acts for, and the
// key's name.
type Caller struct{ Agency, Key string }

// Enter takes a place for a call, or reports none free; a call admitted
// must be answered with Done, with its caller and how long it took. A
// key holds at most its share among its agency's keys, of the agency's
// share among the agencies (share): one key, or one agency's keys
// together, flooding the edge are turned away while another's calls are
// still let in, and an agency of one key is not outnumbered by one of
// many.
func (l *Limiter) Enter(c Caller) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.agencies = l.agencies || l.first != "" && c.Agency != l.first
	l.first = cmp.Or(l.first, c.Agency)
	room := l.limit
	if l.agencies {
		room = float64(share(l.byAgency, c.Agency, l.limit))
	}
	keys := l.byKey[c.Agency]
	if l.inFlight >= int(l.limit) || l.byAgency[c.Agency] >= int(room) || keys[c.Key] >= share(keys, c.Key, room) {
		l.refused = true
		return false
	}
	if l.byAgency == nil {
		l.byAgency, l.byKey = map[string]int{}, map[string]map[string]int{}
	}
	if keys == nil {
		keys = map[string]int{}
		l.byKey[c.Agency] = keys
	}
	keys[c.Key]++
	l.byAgency[c.Agency]++
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	l.told()
	return true
}

// share is the most places name may hold among those holding places in
// held: an equal part of the limit among them (name among them), and at
// least one. One alone leaves a quarter free for one that holds none yet;
// the limit grows while calls are turned away within the latency aim, so
// a deployment with one key loses no capacity it can serve. Agencies are
// held to shares once a second agency has called, so that a deployment
// of one agency runs as before.
func share(held map[string]int, name string, limit float64) int {
	n := len(held)
	if held[name] == 0 {
		n++
	}
	if n == 1 {
		return max(1, int(limit-math.Floor(limit/4)))
	}
	return max(1, int(math.Ceil(limit/float64(n))))
}

// Done gives back the place of a call from c that took took.
func (l *Limiter) Done(c Caller, took time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The maps hold the callers with calls in flight, no more.
	keys := l.byKey[c.Agency]
	if keys[c.Key]--; keys[c.Key] <= 0 {
		delete(keys, c.Key)
	}
	if l.byAgency[c.Agency]--; l.byAgency[c.Agency] <= 0 {
		delete(l.byAgency, c.Agency)
		delete(l.byKey, c.Agency)
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
