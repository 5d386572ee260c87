package chaos

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Outcome is what a caller may conclude from one call, as Jepsen has it.
type Outcome string

const (
	// OK: the request took effect (a booking confirmed, held, cancelled or
	// moved).
	OK Outcome = "ok"
	// Fail: the request definitely did not take effect (a conflict, a
	// refusal).
	Fail Outcome = "fail"
	// Unknown: it may or may not have (no answer, a 5xx,
	// pending_reconciliation); the caller retries with the same key.
	Unknown Outcome = "unknown"
)

// Call is one entry of the history: one HTTP call and what came back.
type Call struct {
	Client int
	// Agency is the id of the agency the call's key acts for.
	Agency     string
	Op         string // book, hold, cancel, reschedule
	Key        string // the booking's request key (the old one for a reschedule)
	NewKey     string // a reschedule's new key
	Start, End time.Time
	HTTP       int // 0 when no answer came
	// Retryable is what an error answer (not a receipt) said.
	Retryable bool
	Err       string
	Receipt   *receipt.Receipt
	Outcome   Outcome
}

// history is every call of a run, appended by all clients.
type history struct {
	mu    sync.Mutex
	calls []Call
}

func (h *history) add(c Call) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
}

func (h *history) all() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

// caller is one voice agent booking through the API: it keeps its own
// bookings to cancel and move, and retries an unknown outcome with the
// same key, as the API asks. It has two APIs, as behind a load balancer:
// when one answers nothing it sends the retry to the other.
type caller struct {
	id     int
	agency string
	urls   []string
	at     atomic.Int32 // the API in use, an index into urls; a resend runs beside
	key    string
	http   *http.Client
	rng    *rand.Rand
	cat    catalogue
	hist   *history
	mine   []string
	think  time.Duration
	// shed counts the calls answered "at capacity" (the edge's admission).
	shed *atomic.Int64
	// reply texts body from key's caller to the agency's number, as
	// Twilio takes it: STOP (stopsTexts), or a reply not understood
	// (asksBack).
	reply func(key, body string)
	// link is the path of the link to the page of key's caller, from the
	// texts they got; "" when none came yet.
	link func(key string) string
}

func (c *caller) run(ctx context.Context) {
	for ctx.Err() == nil {
		p := c.rng.Float64()
		switch {
		case len(c.mine) > 0 && p < 0.12:
			c.cancel(ctx)
		case len(c.mine) > 0 && p < 0.24:
			c.reschedule(ctx)
		case len(c.mine) > 0 && p < 0.30:
			c.page(ctx)
		case p < 0.38:
			c.hold(ctx)
		default:
			c.book(ctx, uuid.NewString(), c.cat.pick(c.rng))
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(c.rng.Int64N(int64(c.think) + 1))):
		}
	}
}

// book commits a new intent with a contact, which the API seals in the
// store first; a fifth of the time a duplicate goes out at once, as a
// platform resending a slow tool call does.
func (c *caller) book(ctx context.Context, key string, slot edge.Slot) {
	body := api.BookingBody{RequestKey: key, Slot: slot, ExpectedPolicyVersion: policyVersion, Contact: contactFor(key)}
	if c.rng.Float64() < 0.2 {
		go c.call(context.WithoutCancel(ctx), "book", key, "", "/v1/bookings", body)
	}
	if r := c.retry(ctx, "book", key, "", "/v1/bookings", body); r != nil && r.Status == receipt.StatusConfirmed {
		c.mine = append(c.mine, key)
		switch {
		case c.reply == nil:
		case stopsTexts(key):
			c.reply(key, "STOP")
		case asksBack(key):
			c.reply(key, "what time was it again?")
			c.reply(key, "hello?") // answered once a day: this one is not
		}
	}
}

// stopsTexts: a quarter of the callers who agreed to texts text STOP
// once booked, by the key alone: their later texts must go nowhere.
func stopsTexts(key string) bool { return channelFor(key) == booking.ChannelSMS && int(key[2])%4 == 0 }

// asksBack: another quarter of them text back something the service
// does not understand, which it answers once a day (asksBack and
// answeredOnce).
func asksBack(key string) bool { return channelFor(key) == booking.ChannelSMS && int(key[2])%4 == 1 }

// contactFor is key's caller: a third agree to texts, a third to e-mail,
// a third to nothing, by the key alone, so the checks know which is which;
// half agree to be kept on file.
func contactFor(key string) *edge.Contact {
	c := &edge.Contact{Name: "Chaos Caller", Phone: phoneFor(key), Language: "en", KeepOnFile: keptOnFile(key)}
	switch channelFor(key) {
	case booking.ChannelSMS:
		c.Notify = "sms"
	case booking.ChannelEmail:
		c.Notify, c.Email = "email", key+"@callers.chaos.test"
	}
	return c
}

// phoneFor is key's caller's own mobile number, so that each caller kept
// on file is a HubSpot contact of their own.
func phoneFor(key string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return fmt.Sprintf("+336%08d", h.Sum32()%100_000_000)
}

// keptOnFile: half the callers agree to be kept in the agency's CRM,
// by the key alone.
func keptOnFile(key string) bool { return int(key[1])%2 == 0 }

func channelFor(key string) booking.Channel {
	return []booking.Channel{booking.ChannelSMS, booking.ChannelEmail, booking.ChannelNone}[int(key[0])%3]
}

// hold holds a slot, then either books it or lets the hold lapse.
func (c *caller) hold(ctx context.Context) {
	slot := c.cat.pick(c.rng)
	body := api.IntentBody{ConversationID: "chaos-" + uuid.NewString(), Slot: slot, Hold: true, ExpectedPolicyVersion: policyVersion}
	var answer api.IntentAnswer
	start := time.Now()
	code, retryable, err := c.post(ctx, "/v1/intents", body, &answer)
	call := Call{Client: c.id, Agency: c.agency, Op: "hold", Key: answer.RequestKey, Start: start, End: time.Now(), HTTP: code, Receipt: answer.Hold,
		Retryable: retryable}
	call.Outcome, call.Err = classify(code, answer.Hold, err)
	c.hist.add(call)
	if answer.Hold == nil || answer.Hold.Status != receipt.StatusHeld || c.rng.Float64() < 0.5 {
		return // abandoned: the saga's hold timer expires it
	}
	c.book(ctx, answer.RequestKey, slot)
}

func (c *caller) cancel(ctx context.Context) {
	i := c.rng.IntN(len(c.mine))
	key := c.mine[i]
	if r := c.retry(ctx, "cancel", key, "", "/v1/bookings/"+key+"/cancel", struct{}{}); r != nil && r.Status == receipt.StatusCancelled {
		c.mine = append(c.mine[:i], c.mine[i+1:]...)
	}
}

func (c *caller) reschedule(ctx context.Context) {
	i := c.rng.IntN(len(c.mine))
	key, newKey := c.mine[i], uuid.NewString()
	body := edge.RescheduleBody{NewRequestKey: newKey, Slot: c.cat.pick(c.rng), ExpectedPolicyVersion: policyVersion}
	r := c.retry(ctx, "reschedule", key, newKey, "/v1/bookings/"+key+"/reschedule", body)
	if r != nil && r.Status == receipt.StatusConfirmed && r.RequestKey == newKey {
		c.mine[i] = newKey
	}
}

// retry sends a call until its outcome is known, or a few times; the last
// receipt, if any, is returned.
func (c *caller) retry(ctx context.Context, op, key, newKey, path string, body any) *receipt.Receipt {
	var last *receipt.Receipt
	for attempt := range 6 {
		r, outcome := c.call(ctx, op, key, newKey, path, body)
		if r != nil {
			last = r
		}
		if outcome != Unknown || ctx.Err() != nil {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(time.Duration(200<<attempt) * time.Millisecond):
		}
	}
	return last
}

func (c *caller) call(ctx context.Context, op, key, newKey, path string, body any) (*receipt.Receipt, Outcome) {
	var r receipt.Receipt
	start := time.Now()
	code, retryable, err := c.post(ctx, path, body, &r)
	call := Call{Client: c.id, Agency: c.agency, Op: op, Key: key, NewKey: newKey, Start: start, End: time.Now(), HTTP: code, Retryable: retryable}
	if code != 0 && r.Status != "" {
		call.Receipt = &r
	}
	call.Outcome, call.Err = classify(code, call.Receipt, err)
	c.hist.add(call)
	if code == 0 {
		c.at.Add(1)
	}
	return call.Receipt, call.Outcome
}

// post sends one call and decodes its answer into out; retryable is what
// an error answer said of itself.
func (c *caller) post(ctx context.Context, path string, body, out any) (code int, retryable bool, err error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.urls[int(c.at.Load())%len(c.urls)]+path, bytes.NewReader(data))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	// Every call here is idempotent (a request key, or a conversation and
	// a slot): saying so lets Go's transport send it again when a
	// keep-alive connection it went out on was being closed by a draining
	// server, rather than answer EOF for a call the server never read.
	req.Header.Set("Idempotency-Key", fmt.Sprintf("%x", sha256.Sum256(data)))
	res, err := c.http.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, false, err
	}
	if res.StatusCode == http.StatusServiceUnavailable && bytes.Contains(raw, []byte("at capacity")) && c.shed != nil {
		c.shed.Add(1)
	}
	var e struct {
		Retryable bool `json:"retryable"`
	}
	_ = json.Unmarshal(raw, &e)
	if err := json.Unmarshal(raw, out); err != nil {
		return res.StatusCode, e.Retryable, fmt.Errorf("decode %d answer %q: %w", res.StatusCode, raw, err)
	}
	return res.StatusCode, e.Retryable, nil
}

// classify turns one answer into an outcome.
func classify(code int, r *receipt.Receipt, err error) (Outcome, string) {
	switch {
	case err != nil:
		return Unknown, err.Error()
	case code >= 500 || r == nil:
		return Unknown, fmt.Sprintf("http %d", code)
	}
	switch r.Status {
	case receipt.StatusConfirmed, receipt.StatusHeld, receipt.StatusCancelled, receipt.StatusRescheduled, receipt.StatusReassigned:
		return OK, ""
	case receipt.StatusPending, receipt.StatusOffered:
		return Unknown, ""
	}
	return Fail, ""
}

// refused reports whether err means nothing reached the server: the
// connection was refused, or an idle one was closed before the request
// went out.
func refused(msg string) bool {
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "server closed idle connection")
}
