// Package ratelimit holds each caller's token bucket and the calls it
// made lately: one call is one token, except a booking call repeated
// within the window, which lands on the same saga by its key and is free.
package ratelimit

import (
	"crypto/sha256"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound how fast one caller may call.
type Limits struct {
	// PerSecond and Burst are each caller's token bucket; 0 turns
	// limiting off.
	PerSecond float64
	Burst     int
	// AgencyPerSecond and AgencyBurst are each agency's bucket, which
	// all its keys' calls draw on too: an agency of many keys is held
	// to its own share of the deployment. 0 turns it off.
	AgencyPerSecond float64
	AgencyBurst     int
	// RepeatWindow is how long a repeated booking call stays free.
	RepeatWindow time.Duration
}

// DefaultLimits fit a voice deployment: one key per platform, a few
// hundred concurrent calls each making a tool call every few seconds.
// An agency may run four such keys at once.
func DefaultLimits() Limits {
	return Limits{PerSecond: 50, Burst: 100, AgencyPerSecond: 200, AgencyBurst: 400, RepeatWindow: time.Minute}
}

// maxSeen bounds the calls a caller's bucket remembers; past it, calls
// older than the window go.
const maxSeen = 10000

// Buckets are the callers' buckets under one set of limits.
type Buckets struct {
	limits Limits
	mu     sync.Mutex
	by     map[string]*bucket
	agency map[string]*rate.Limiter
}

// bucket is one caller's tokens and the booking calls it has made lately.
type bucket struct {
	tokens *rate.Limiter
	mu     sync.Mutex
	seen   map[[32]byte]time.Time
}

// New is the buckets of limits.
func New(limits Limits) *Buckets {
	return &Buckets{limits: limits, by: map[string]*bucket{}, agency: map[string]*rate.Limiter{}}
}

// Limits are the limits in force.
func (b *Buckets) Limits() Limits { return b.limits }

func (b *Buckets) of(name string) *bucket {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.by[name]
	if bk == nil {
		bk = &bucket{tokens: rate.NewLimiter(rate.Limit(b.limits.PerSecond), b.limits.Burst), seen: map[[32]byte]time.Time{}}
		b.by[name] = bk
	}
	return bk
}

func (b *Buckets) ofAgency(id string) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.agency[id]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(b.limits.AgencyPerSecond), b.limits.AgencyBurst)
		b.agency[id] = l
	}
	return l
}

// Verdict is a charge's outcome: OK, or how long until a token is free
// (0 when the bucket can never give one), and whether the agency's
// bucket refused rather than the key's.
type Verdict struct {
	OK     bool
	Wait   time.Duration
	Agency bool
}

// Charge spends one of key name's tokens, and one of its agency's, on
// call, or reports how long until both are free. A booking call
// repeated within the window is free (repeatFree): refusing it would
// refuse exactly what idempotency is for. A read is charged every time,
// since each asks the store, Temporal or a calendar again.
func (b *Buckets) Charge(name, agency string, call []byte, repeatFree bool, now time.Time) Verdict {
	if b.limits.PerSecond <= 0 {
		return Verdict{OK: true}
	}
	sum := sha256.Sum256(call)
	bk := b.of(name)
	bk.mu.Lock()
	defer bk.mu.Unlock()
	if at, seen := bk.seen[sum]; repeatFree && seen && now.Sub(at) < b.limits.RepeatWindow {
		return Verdict{OK: true}
	}
	res := bk.tokens.ReserveN(now, 1)
	if v := spent(res, now); !v.OK {
		return v
	}
	if b.limits.AgencyPerSecond > 0 {
		if v := spent(b.ofAgency(agency).ReserveN(now, 1), now); !v.OK {
			res.CancelAt(now) // the key's token goes back: nothing was let through
			v.Agency = true
			return v
		}
	}
	if repeatFree {
		bk.remember(sum, now, b.limits.RepeatWindow)
	}
	return Verdict{OK: true}
}

// spent is a reservation taken now, or given back with how long until it
// could be.
func spent(res *rate.Reservation, now time.Time) Verdict {
	if !res.OK() {
		return Verdict{}
	}
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return Verdict{Wait: wait}
	}
	return Verdict{OK: true}
}

// remember records a call; past maxSeen, calls older than the window go.
func (bk *bucket) remember(sum [32]byte, now time.Time, window time.Duration) {
	if len(bk.seen) >= maxSeen {
		for k, at := range bk.seen {
			if now.Sub(at) >= window {
				delete(bk.seen, k)
			}
		}
	}
	bk.seen[sum] = now
}
