// Package retry runs a call again after transient failures, with capped
// exponential backoff, full jitter, and a server's Retry-After honoured.
//
// The adapters use it for the short in-call retries a rate-limited API
// expects; longer outages are left to the Temporal activity retry policy,
// which sees the last error and its Retry-After (see After).
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Policy bounds the retries of one call.
type Policy struct {
	// Attempts is the total number of tries, the first included.
	Attempts int
	// Base is the first backoff; each next one doubles up to Max.
	Base, Max time.Duration
	// Sleep waits d or until ctx ends; nil means a real timer. Tests replace
	// it to record the waits instead of spending them.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Default is three tries, 200 ms then 400 ms (jittered), at most 5 s apart.
func Default() Policy {
	return Policy{Attempts: 3, Base: 200 * time.Millisecond, Max: 5 * time.Second}
}

type onceKey struct{}

// Once marks ctx for a single try. A caller with a small budget of its own
// (the commit's calendar re-check) would rather go on without the answer
// than spend the budget on a retry.
func Once(ctx context.Context) context.Context { return context.WithValue(ctx, onceKey{}, true) }

// Verdict is a classifier's answer about one error.
type Verdict struct {
	Retry bool
	// After is the server's Retry-After, zero when it sent none.
	After time.Duration
}

// Do calls fn until it succeeds, classify says the error is final, the
// attempts run out or ctx ends. It returns fn's last error; a transient one
// comes wrapped in *Exhausted so that Transient can read it.
func (p Policy) Do(ctx context.Context, classify func(error) Verdict, fn func(context.Context) error) error {
	attempts := max(p.Attempts, 1)
	if ctx.Value(onceKey{}) != nil {
		attempts = 1
	}
	for i := 0; ; i++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		v := classify(err)
		if !v.Retry {
			return err
		}
		if i+1 >= attempts || ctx.Err() != nil {
			return &Exhausted{Err: err, After: v.After}
		}
		if serr := p.sleep(ctx, p.wait(i, v.After)); serr != nil {
			return &Exhausted{Err: err, After: v.After}
		}
	}
}

// wait is the pause before try i+1: the server's Retry-After when it gave
// one (capped at Max), otherwise full jitter over the exponential step.
func (p Policy) wait(i int, after time.Duration) time.Duration {
	if after > 0 {
		return min(after, p.Max)
	}
	step := p.Base << i
	if step <= 0 || step > p.Max {
		step = p.Max
	}
	return time.Duration(rand.Int64N(int64(step)) + 1)
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Exhausted is a transient error that outlasted the policy. It stays
// retryable for an outer retry loop.
type Exhausted struct {
	Err   error
	After time.Duration
}

func (e *Exhausted) Error() string { return e.Err.Error() + " (retries exhausted)" }
func (e *Exhausted) Unwrap() error { return e.Err }

// Transient reports whether err is a transient failure that outlasted its
// policy, and the server's Retry-After if it sent one.
func Transient(err error) (after time.Duration, ok bool) {
	var ex *Exhausted
	if errors.As(err, &ex) {
		return ex.After, true
	}
	return 0, false
}

// ParseAfter reads a Retry-After header, in seconds (Microsoft Graph sends
// fractions: "2.128") or as an HTTP date.
func ParseAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
