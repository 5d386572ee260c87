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
	// RepeatWindow is how long a repeated booking call stays free.
	RepeatWindow time.Duration
}

// DefaultLimits fit a voice deployment: one key per platform, a few
// hundred concurrent calls each making a tool call every few seconds.
func DefaultLimits() Limits { return Limits{PerSecond: 50, Burst: 100, RepeatWindow: time.Minute} }

// maxSeen bounds the calls a caller's bucket remembers; past it, calls
// older than the window go.
const maxSeen = 10000

// Buckets are the callers' buckets under one set of limits.
type Buckets struct {
	limits Limits
	mu     sync.Mutex
	by     map[string]*bucket
}

// bucket is one caller's tokens and the booking calls it has made lately.
type bucket struct {
	tokens *rate.Limiter
	mu     sync.Mutex
	seen   map[[32]byte]time.Time
}

// New is the buckets of limits.
func New(limits Limits) *Buckets { return &Buckets{limits: limits, by: map[string]*bucket{}} }

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

// Charge spends one of name's tokens on call, or reports how long until
// one is free (0 when the bucket can never give one). A booking call
// repeated within the window is free (repeatFree): refusing it would
// refuse exactly what idempotency is for. A read is charged every time,
// since each asks the store, Temporal or a calendar again.
func (b *Buckets) Charge(name string, call []byte, repeatFree bool, now time.Time) (ok bool, wait time.Duration) {
	if b.limits.PerSecond <= 0 {
		return true, 0
	}
	sum := sha256.Sum256(call)
	bk := b.of(name)
	bk.mu.Lock()
	defer bk.mu.Unlock()
	if at, seen := bk.seen[sum]; repeatFree && seen && now.Sub(at) < b.limits.RepeatWindow {
		return true, 0
	}
	res := bk.tokens.ReserveN(now, 1)
	if !res.OK() {
		return false, 0
	}
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return false, wait
	}
	if repeatFree {
		bk.remember(sum, now, b.limits.RepeatWindow)
	}
	return true, 0
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
