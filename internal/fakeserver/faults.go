// Package fakeserver is what the fakes of the outside systems share
// (gcaltest, graphtest, crmtest): injected faults, played out around each
// operation, and the journal that keeps a fake's state across a crash.
// Tests and the dev stack use the fakes in place of the real services;
// the real clients talk to them unchanged.
package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Fault is one injected misbehaviour for one operation.
//
// Failures (Status) happen before the write; DropAfterSave and
// TimeoutAfterSave happen after it, which is the case that makes a caller
// believe a write failed when it was stored.
type Fault struct {
	// Op names the operation, e.g. "events.insert" or "viewings.upsert".
	Op string `json:"op"`
	// Times is how many requests the fault applies to; 0 means until cleared.
	Times int `json:"times"`
	// Latency is added before the request is handled.
	Latency time.Duration `json:"latency"`
	// Status, when set, fails the request with this HTTP status and Reason.
	Status int    `json:"status"`
	Reason string `json:"reason"`
	// RetryAfter sets the Retry-After header on a failure, in whole seconds.
	RetryAfter time.Duration `json:"retry_after"`
	// DropAfterSave stores the write, then closes the connection unanswered.
	DropAfterSave bool `json:"drop_after_save"`
	// TimeoutAfterSave stores the write, then holds the reply until the
	// client gives up (or MaxHold passes) and closes the connection.
	TimeoutAfterSave bool `json:"timeout_after_save"`
	// StaleETag changes the target event just before the request is
	// handled, as a person editing it in between would, so the etag the
	// client read is stale (the Graph fake's updates and deletes).
	StaleETag bool `json:"stale_etag"`
}

// MaxHold bounds how long TimeoutAfterSave holds a request, so a client
// without a deadline cannot pin a server goroutine forever.
const MaxHold = 30 * time.Second

func (f Fault) validate() error {
	switch {
	case f.Op == "":
		return fmt.Errorf("fault: op is required")
	case f.Times < 0:
		return fmt.Errorf("fault %s: times must be >= 0", f.Op)
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("fault %s: status %d is not an error status", f.Op, f.Status)
	case f.Status != 0 && (f.DropAfterSave || f.TimeoutAfterSave || f.StaleETag):
		return fmt.Errorf("fault %s: a failure status and a fault that lets the request through exclude each other", f.Op)
	}
	return nil
}

// Faults is the registry every fake embeds: queued faults and call counts
// per op. Its methods are the fakes' own.
type Faults struct {
	mu     sync.Mutex
	queued []Fault
	calls  map[string]int
	// random faults a share of the calls no queued fault applies to.
	random *randomFaults
	// released is closed by release, to let go of every held request.
	released     chan struct{}
	releasedOnce sync.Once
}

// Done returns the channel that Release closes.
func (fs *Faults) Done() <-chan struct{} {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.released == nil {
		fs.released = make(chan struct{})
	}
	return fs.released
}

// Release ends every injected wait at once, e.g. before a server closes.
func (fs *Faults) Release() {
	fs.Done()
	fs.releasedOnce.Do(func() { close(fs.released) })
}

// Inject queues a fault for one operation (the fake's docs name them).
func (fs *Faults) Inject(f Fault) error {
	if err := f.validate(); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.queued = append(fs.queued, f)
	return nil
}

// ClearFaults drops every queued fault.
func (fs *Faults) ClearFaults() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.queued = nil
}

// Take counts a call to op and returns the first queued fault for it, using
// up one of its Times. Fakes of protocols other than HTTP (the SMTP sink)
// play it out themselves.
func (fs *Faults) Take(op string) Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.calls == nil {
		fs.calls = map[string]int{}
	}
	fs.calls[op]++
	for i, f := range fs.queued {
		if f.Op != op {
			continue
		}
		if f.Times > 0 {
			fs.queued[i].Times--
			if fs.queued[i].Times == 0 {
				fs.queued = append(fs.queued[:i], fs.queued[i+1:]...)
			}
		}
		return f
	}
	if r := fs.random; r != nil && r.rng.Float64() < r.rate {
		f := r.kinds[r.rng.IntN(len(r.kinds))]
		f.Op = op
		return f
	}
	return Fault{}
}

// randomFaults is a chaos run's standing misbehaviour.
type randomFaults struct {
	rate  float64
	kinds []Fault
	rng   *rand.Rand
}

// InjectRandom makes rate (0 to 1) of all calls misbehave, each as one of
// kinds picked at random (their Op and Times are ignored), whenever no
// queued fault applies. A rate of 0 turns it off.
func (fs *Faults) InjectRandom(rate float64, kinds []Fault, seed uint64) error {
	if rate < 0 || rate > 1 || rate > 0 && len(kinds) == 0 {
		return fmt.Errorf("random faults: rate %v must be 0 to 1, with at least one kind", rate)
	}
	for _, f := range kinds {
		f.Op = "any"
		if err := f.validate(); err != nil {
			return err
		}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.random = nil
	if rate > 0 {
		fs.random = &randomFaults{rate: rate, kinds: kinds, rng: rand.New(rand.NewPCG(seed, seed))}
	}
	return nil
}

// Calls reports how many requests reached op, faulted or not.
func (fs *Faults) Calls(op string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.calls[op]
}

// APIError is a refusal a fake answers with.
type APIError struct {
	Status        int
	Code, Message string
}

func (e *APIError) Error() string { return e.Message }

// Handler does one operation under the fake's lock and returns the reply,
// or an *APIError to refuse.
type Handler func(r *http.Request) (status int, body any, err error)

// Serve runs h for op with op's fault applied around it: latency and
// failures before, lost replies after the write. After a write that
// succeeded it flushes j (nil: none), so a fake that keeps a file keeps it
// current even if its process is killed.
func Serve(fs *Faults, mu *sync.Mutex, j *Journal, op string, fail ErrorWriter, h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f := fs.Take(op)
		stop := fs.Done()
		if !f.Before(w, r, stop, fail) {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), faultKey{}, f))
		mu.Lock()
		status, body, err := h(r)
		mu.Unlock()
		if err == nil && r.Method != http.MethodGet && j != nil {
			mu.Lock()
			j.Flush()
			mu.Unlock()
		}
		if ae, ok := err.(*APIError); ok {
			fail(w, ae.Status, ae.Code, ae.Message)
			return
		}
		if err != nil {
			fail(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
		f.Reply(w, r, stop, status, body)
	}
}

type faultKey struct{}

// FaultOf is the fault applied to r, for the parts a Handler plays out.
func FaultOf(r *http.Request) Fault {
	f, _ := r.Context().Value(faultKey{}).(Fault)
	return f
}

// ErrorWriter renders a failure in the dialect of one fake.
type ErrorWriter func(w http.ResponseWriter, status int, reason, message string)

// Before applies the parts of f that happen before the operation runs. It
// reports false when the request has been answered (failed) already.
func (f Fault) Before(w http.ResponseWriter, r *http.Request, stop <-chan struct{}, fail ErrorWriter) bool {
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return false
		case <-stop:
			closeUnanswered(w)
			return false
		}
	}
	if f.Status == 0 {
		return true
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter.Round(time.Second)/time.Second)))
	}
	reason := f.Reason
	if reason == "" {
		reason = http.StatusText(f.Status)
	}
	fail(w, f.Status, reason, "injected fault")
	return false
}

// Reply writes body as JSON unless f says to lose the reply after the save.
func (f Fault) Reply(w http.ResponseWriter, r *http.Request, stop <-chan struct{}, status int, body any) {
	switch {
	case f.DropAfterSave:
		closeUnanswered(w)
	case f.TimeoutAfterSave:
		t := time.NewTimer(MaxHold)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		case <-stop:
		}
		closeUnanswered(w)
	default:
		WriteJSON(w, status, body)
	}
}

// closeUnanswered closes the client connection without writing a response,
// which is what a crash or a lost packet after the commit looks like.
func closeUnanswered(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fakeserver: connection cannot be hijacked; serve over HTTP/1.1")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(fmt.Sprintf("fakeserver: hijack: %v", err))
	}
	_ = conn.Close()
}

// WriteJSON answers body as JSON, or status alone when body is nil.
func WriteJSON(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// FaultAdmin serves POST (add one fault) and DELETE (clear all) on the
// fake's /_fake/faults path, so a running dev stack can be steered over HTTP.
func FaultAdmin(fs *Faults) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			var f Fault
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&f); err != nil {
				http.Error(w, "decode fault: "+err.Error(), http.StatusBadRequest)
				return
			}
			if err := fs.Inject(f); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case http.MethodDelete:
			fs.ClearFaults()
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "use POST or DELETE", http.StatusMethodNotAllowed)
		}
	}
}
