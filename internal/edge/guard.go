package edge

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
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

// actFor makes r act for the agency of the key it came in under: the
// store, the sagas and the workflow ids it reaches are that agency's. A
// call never names its agency itself.
func (s *Server) actFor(r *http.Request, key apikey.Key) (*http.Request, error) {
	if key.Agency == "" || key.Agency == agency.Default.ID {
		return r, nil
	}
	if a, ok := s.agencies.Load(key.Agency); ok {
		return r.WithContext(agency.With(r.Context(), a.(agency.Agency))), nil
	}
	if s.cfg.Agencies == nil {
		return r, fmt.Errorf("key %s acts for agency %s, and this API has no store to find agencies in", key.Name, key.Agency)
	}
	noAgency := &Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized),
		Message: fmt.Sprintf("key %s belongs to agency %s, which this deployment does not have", key.Name, key.Agency)}
	// A platform's call (no key of the keys file: the agency is its
	// URL's, and anyone may send one) is refused from memory for an id
	// found to be none lately, so that unsigned calls to made-up agencies
	// do not each read the store. A key's agency is the keys file's.
	signed := key.Hash == ""
	if signed && s.missing.seen(key.Agency, s.cfg.Now()) {
		return r, noAgency
	}
	a, err := s.cfg.Agencies.FindAgency(r.Context(), key.Agency)
	if errors.Is(err, booking.ErrNotFound) {
		if signed {
			s.missing.add(key.Agency, s.cfg.Now())
		}
		return r, noAgency
	}
	if err != nil {
		return r, fmt.Errorf("agency of key %s: %w", key.Name, err)
	}
	s.agencies.Store(key.Agency, a)
	return r.WithContext(agency.With(r.Context(), a)), nil
}

func scopeList(scopes []apikey.Scope) string {
	var s []string
	for _, sc := range scopes {
		s = append(s, string(sc))
	}
	return strings.Join(s, ", ")
}

// admit charges key for r, unless r repeats a write seen within the
// window. It reads the body (already bounded by MaxBody) and puts it back.
func (s *Server) admit(key apikey.Key, r *http.Request) *Error {
	// Over MaxBody (the reader is bounded) or cut off, a body is refused
	// as the handlers refuse it, and charged, so that a flood of
	// oversized bodies is limited too.
	body, _ := Buffer(r)
	call := append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), body...)
	return charge(s.limits, key, call, r.Method != http.MethodGet, s.cfg.Now())
}

// charge spends one of key's tokens, and one of its agency's, on call
// (ratelimit.Buckets.Charge), answering 429 with Retry-After when there
// is none.
func charge(b *ratelimit.Buckets, key apikey.Key, call []byte, repeatFree bool, now time.Time) *Error {
	v := b.Charge(key.Name, cmp.Or(key.Agency, agency.Default.ID), call, repeatFree, now)
	switch {
	case v.OK:
		return nil
	case v.Wait > 0 && v.Agency:
		return &Error{Status: http.StatusTooManyRequests, Code: string(booking.CodeRateLimited), RetryAfter: v.Wait,
			Message: fmt.Sprintf("the agency's keys are over its limit of %.0f calls a second together; retry after %s (repeats of one booking call are not counted)",
				b.Limits().AgencyPerSecond, retryAfter(v.Wait))}
	case v.Wait > 0:
		return &Error{Status: http.StatusTooManyRequests, Code: string(booking.CodeRateLimited), RetryAfter: v.Wait,
			Message: fmt.Sprintf("key %s is over its limit of %.0f calls a second; retry after %s (repeats of one booking call are not counted)",
				key.Name, b.Limits().PerSecond, retryAfter(v.Wait))}
	}
	return &Error{Status: http.StatusTooManyRequests, Code: string(booking.CodeRateLimited), RetryAfter: time.Second, Message: "over the rate limit"}
}

// chargeKey carries, to a PerCall route's handler, what Charge needs.
type chargeKey struct{}

type charger struct {
	limits *ratelimit.Buckets
	key    apikey.Key
	now    func() time.Time
}

// Charge charges one call that a PerCall route's request carries (a voice
// tool call: a Vapi message may carry several) to the key the request
// came in under, as the guard charges a request: a write repeated within
// the window is free (repeatFree), a read costs every time. Outside a
// PerCall route it charges nothing.
func Charge(ctx context.Context, call []byte, repeatFree bool) *Error {
	c, ok := ctx.Value(chargeKey{}).(charger)
	if !ok {
		return nil
	}
	return charge(c.limits, c.key, call, repeatFree, c.now())
}

// Buffer reads r's body (bounded by MaxBody) and puts it back for the
// handler; a body that could not be read whole comes back as nil, and the
// handler meets the same error.
func Buffer(r *http.Request) ([]byte, error) {
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

// retryAfter is the Retry-After header's whole seconds, at least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// signedBy is the key a platform's signed call comes in under: the
// platform's name ("retell", "vapi") at the deployment's tool URLs, for
// the default agency; at an agency's (/v1/agencies/{agency}/tools/...)
// its name at the agency ("retell@lyon"), acting for the agency, so that
// the call's limits, conversations and log line are the agency's. A
// caller's page (agency.AgencyPagePattern) acts for its agency the same
// way, as "page@lyon". Any other route's key comes from authenticate.
func signedBy(rt Route, r *http.Request) (apikey.Key, *Error) {
	rest, ok := strings.CutPrefix(rt.Path, "/v1/tools/")
	if ok {
		platform, _, _ := strings.Cut(rest, "/")
		return apikey.Key{Name: platform}, nil
	}
	name := "page"
	if rest, ok = strings.CutPrefix(rt.Path, "/v1/agencies/{agency}/tools/"); ok {
		name, _, _ = strings.Cut(rest, "/")
	} else if rt.Path != agency.AgencyPagePattern {
		return apikey.Key{}, nil
	}
	id := r.PathValue("agency")
	if agency.ValidID(id) != nil {
		return apikey.Key{}, &Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized),
			Message: fmt.Sprintf("no agency %q signs calls here", id)}
	}
	return apikey.Key{Name: name + "@" + id, Agency: id}, nil
}

// recentlyMissing remembers agency ids found to be none, for
// missingFor: an agency made meanwhile is found once that has passed.
// It holds at most maxMissing ids, forgetting them all past that, so
// that made-up ids cannot grow it.
type recentlyMissing struct {
	mu sync.Mutex
	at map[string]time.Time
}

const (
	missingFor = 5 * time.Second
	maxMissing = 1024
)

func (m *recentlyMissing) seen(id string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.at[id]
	return ok && now.Sub(at) < missingFor
}

func (m *recentlyMissing) add(id string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at == nil || len(m.at) >= maxMissing {
		m.at = map[string]time.Time{}
	}
	m.at[id] = now
}
