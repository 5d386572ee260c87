package api

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
)

// anyone is who calls when the API runs without keys (the dev stack only).
var anyone = apikey.Key{Name: "open", Scopes: []apikey.Scope{apikey.ScopeAgent, apikey.ScopeAdmin, apikey.ScopeOps}}

// authenticate finds the caller's key and checks it may call a route of
// scope.
func (s *Server) authenticate(r *http.Request, scope apikey.Scope) (apikey.Key, *Error) {
	if s.cfg.Keys == nil {
		return anyone, nil
	}
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || secret == "" {
		return apikey.Key{}, &Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: "an API key is required: Authorization: Bearer <key>"}
	}
	key, err := s.cfg.Keys.Find(secret)
	if err != nil {
		return apikey.Key{}, &Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: "this API key is not valid (revoked, or mistyped)"}
	}
	if !key.Allows(scope) {
		return apikey.Key{}, &Error{Status: http.StatusForbidden, Code: string(booking.CodeWrongScope),
			Message: fmt.Sprintf("key %s may call %s; this call needs the %s scope", key.Name, scopeList(key.Scopes), scope)}
	}
	return key, nil
}

func scopeList(scopes []apikey.Scope) string {
	var s []string
	for _, sc := range scopes {
		s = append(s, string(sc))
	}
	return strings.Join(s, ", ")
}

// Limits bound how fast one key may call. A call repeated byte for byte
// within the window (a platform resending a slow tool call, a model
// re-issuing one) is free: it lands on the same saga, and refusing it
// would refuse exactly what idempotency is for.
type Limits struct {
	// PerSecond and Burst are each key's token bucket; 0 turns limiting off.
	PerSecond float64
	Burst     int
	// RepeatWindow is how long a repeated call stays free.
	RepeatWindow time.Duration
}

// DefaultLimits fit a voice deployment: one key per platform, a few
// hundred concurrent calls each making a tool call every few seconds.
func DefaultLimits() Limits { return Limits{PerSecond: 50, Burst: 100, RepeatWindow: time.Minute} }

// limiter is one key's bucket and the calls it has seen lately.
type limiter struct {
	bucket *rate.Limiter
	mu     sync.Mutex
	seen   map[[32]byte]time.Time
}

type limiters struct {
	mu     sync.Mutex
	by     map[string]*limiter
	limits Limits
}

func (l *limiters) of(name string) *limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]*limiter{}
	}
	lim := l.by[name]
	if lim == nil {
		lim = &limiter{bucket: rate.NewLimiter(rate.Limit(l.limits.PerSecond), l.limits.Burst), seen: map[[32]byte]time.Time{}}
		l.by[name] = lim
	}
	return lim
}

// admit charges key for r, unless r repeats a call seen within the window.
// It reads the body (already bounded by MaxBody) and puts it back.
func (l *limiters) admit(key apikey.Key, r *http.Request, now time.Time) *Error {
	if l.limits.PerSecond <= 0 {
		return nil
	}
	// Over MaxBody (the reader is bounded) or cut off, a body is refused
	// as the handlers refuse it, and charged, so that a flood of
	// oversized bodies is limited too.
	body, _ := buffer(r)
	sum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), body...))
	lim := l.of(key.Name)
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if at, ok := lim.seen[sum]; ok && now.Sub(at) < l.limits.RepeatWindow {
		return nil
	}
	if res := lim.bucket.ReserveN(now, 1); res.OK() && res.DelayFrom(now) == 0 {
		lim.remember(sum, now, l.limits.RepeatWindow)
		return nil
	} else if res.OK() {
		wait := res.DelayFrom(now)
		res.CancelAt(now)
		return &Error{Status: http.StatusTooManyRequests, Code: string(booking.CodeRateLimited), RetryAfter: wait,
			Message: fmt.Sprintf("key %s is over its limit of %.0f calls a second; retry after %s (repeats of one call are not counted)",
				key.Name, l.limits.PerSecond, retryAfter(wait))}
	}
	return &Error{Status: http.StatusTooManyRequests, Code: string(booking.CodeRateLimited), RetryAfter: time.Second, Message: "over the rate limit"}
}

// buffer reads r's body (bounded by MaxBody) and puts it back for the
// handler; a body that could not be read whole comes back as nil, and the
// handler meets the same error.
func buffer(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// errReader fails with the error reading the body met, for the handler.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// remember records a call; past a bound, calls older than the window go.
func (lim *limiter) remember(sum [32]byte, now time.Time, window time.Duration) {
	if len(lim.seen) >= 10000 {
		for k, at := range lim.seen {
			if now.Sub(at) >= window {
				delete(lim.seen, k)
			}
		}
	}
	lim.seen[sum] = now
}

// retryAfter is the Retry-After header's whole seconds, at least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
