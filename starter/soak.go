package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/yardstick"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// soak drives a running dev stack open loop: arrivals at a fixed rate,
// whatever the latency, so a slow answer does not slow the load down as
// it would in a closed loop. Each arrival is one caller's intent: a new
// booking (a fifth of them resent, as a platform resends a slow tool
// call), two callers competing for one slot, a cancel or a reschedule.
type soak struct {
	// apis are called in turn; a call none answers goes to the next once.
	apis            []string
	next            atomic.Uint64
	calendar, graph string
	token           string
	http            *http.Client
	days            []time.Time
	props           []soakProperty // with their agents' calendars

	mu        sync.Mutex
	confirmed []string // keys to cancel or move
	rng       *rand.Rand
}

// soakProperty is a demo property with an agent whose calendar shows the
// booking: mirror lag is measured there, in its provider's fake. Which
// calendar that is, the API says (calendars).
type soakProperty struct {
	property, agent, zone string
	calendar, provider    string
}

var soakProperties = []soakProperty{
	{property: "paris-marais-12", agent: "agent-claire", zone: "Europe/Paris"},
	{property: "paris-loft-3", agent: "agent-hugo", zone: "Europe/Paris"},
	{property: "nyc-soho-7", agent: "agent-maya", zone: "America/New_York"},
}

// calendars reads, from the API, the calendar each soak agent's bookings
// are mirrored to.
func (s *soak) calendars(ctx context.Context) ([]soakProperty, error) {
	out := make([]soakProperty, len(soakProperties))
	for i, p := range soakProperties {
		var r api.ResourceAnswer
		if !s.getAuthorized(ctx, s.apis[0]+"/v1/resources/"+p.agent, &r) || r.CalendarID == "" {
			return nil, fmt.Errorf("soak: the API has no calendar for %s", p.agent)
		}
		p.calendar, p.provider = r.CalendarID, r.CalendarProvider
		out[i] = p
	}
	return out, nil
}

// sample is one tool call's outcome.
type sample struct {
	latency time.Duration
	status  receipt.Status
	err     bool
	// late is how long after its scheduled arrival the call was written
	// out: the soak's own wait, not the service's.
	late time.Duration
	// lag is confirmed-to-calendar-event, for a confirmed new booking.
	lag      time.Duration
	mirrored bool
	// notSent is the API's answer that it did not send the call (503,
	// temporarily_unavailable, retryable, no receipt): shed under load.
	notSent bool
	// failedOver: the API first called answered nothing (it was down or
	// died mid-call), and the call went again, same body, to the next.
	failedOver bool
}

func runSoak(ctx context.Context, tc client.Client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	s := &soak{token: os.Getenv("API_KEY"), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	apis := fs.String("api", "http://127.0.0.1:8080", "the agent API; several, comma-separated, are called in turn, and a call one answers nothing sent again to the next, as a load balancer does")
	fs.StringVar(&s.calendar, "fake-calendar", "http://127.0.0.1:8091", "the dev stack's fake Google Calendar, where mirror lag is measured")
	fs.StringVar(&s.graph, "fake-graph", "http://127.0.0.1:8093", "the dev stack's fake Microsoft 365, where Hugo's mirror lag is measured")
	rates := fs.String("rates", "5,10,20,40", "arrival rates to run, per second, in order")
	per := fs.Duration("duration", time.Minute, "how long each rate runs")
	noop := fs.Bool("noop", true, "also find where a no-op Update-with-Start workflow saturates on the same server")
	shape := fs.Bool("shape", false, "also find where a workflow that makes Temporal do what a booking does, with none of bookingsaga's work, saturates")
	climb := fs.Bool("climb", true, "past the last rate, keep doubling it until the p99 passes the commit wait")
	procs := fs.String("processes", "", "name=pid,...: also print each process's CPU (with its descendants) per confirmed answer, from /proc; the soak's own is always counted")
	stURL := fs.String("statements", "", "the store's database (a login that may reset pg_stat_statements): also print each statement per confirmed booking, and who issues it, at each bookings rate")
	top := fs.Int("statements-top", 40, "how many statements -statements lists at each rate (the totals count them all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cpu, err := parseProcesses("/proc", *procs)
	if err != nil {
		return err
	}
	for _, a := range strings.Split(*apis, ",") {
		s.apis = append(s.apis, strings.TrimRight(strings.TrimSpace(a), "/"))
	}
	var ladder []float64
	for _, r := range strings.Split(*rates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("rates: %q is not a positive number", r)
		}
		ladder = append(ladder, v)
	}
	s.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	if s.props, err = s.calendars(ctx); err != nil {
		return err
	}
	for d := 2; d < 400; d++ {
		s.days = append(s.days, time.Now().AddDate(0, 0, d))
	}
	// The yardsticks first, on a server nothing else has loaded: a booking
	// rate past saturation leaves work queued that would slow them.
	var noopRows, shapeRows []soakRow
	if *noop {
		if noopRows, err = climbYardstick(ctx, tc, yardstick.NoopWorkflow, "no-op", ladder[0], *per, cpu, out); err != nil {
			return err
		}
	}
	if *shape {
		if shapeRows, err = climbYardstick(ctx, tc, yardstick.ShapeWorkflow, "the saga's shape", ladder[0], *per, cpu, out); err != nil {
			return err
		}
	}
	var sts *statements
	if *stURL != "" {
		if sts, err = openStatements(ctx, *stURL); err != nil {
			return err
		}
		defer sts.close()
	}
	var rows []soakRow
	for _, rate := range ladder {
		run := func() soakRow { return cpu.over(func() soakRow { return s.runRate(ctx, rate, *per) }) }
		if sts == nil {
			rows = append(rows, run())
		} else {
			row, st, err := sts.over(ctx, run)
			if err != nil {
				return err
			}
			rows = append(rows, row)
			printStatements(out, rate, row.confirmedCalls, st, *top)
		}
		printSoak(out, "bookings", rows[len(rows)-1:])
		pause(ctx)
	}
	// Past the last rate, keep doubling until p99 passes the commit wait,
	// so the rates measured reach past the saturation point.
	for *climb && !rows[len(rows)-1].saturated() && ctx.Err() == nil && rows[len(rows)-1].rate < 1000 {
		rows = append(rows, cpu.over(func() soakRow { return s.runRate(ctx, 2*rows[len(rows)-1].rate, *per) }))
		printSoak(out, "bookings", rows[len(rows)-1:])
		pause(ctx)
	}
	fmt.Fprintln(out)
	printSoak(out, "bookings", rows)
	if *noop {
		printSoak(out, "no-op Update-with-Start", noopRows)
		fmt.Fprintf(out, "\nsaturation, confirmed a second: bookings %.1f/s, no-op %.1f/s, ratio %.2f (target >= 0.6, goal 0.8)\n",
			saturation(rows), saturation(noopRows), saturation(rows)/saturation(noopRows))
	}
	if *shape {
		printSoak(out, "the saga's shape", shapeRows)
		fmt.Fprintf(out, "the saga's shape %.1f/s: bookings %.2f of it", saturation(shapeRows), saturation(rows)/saturation(shapeRows))
		if *noop {
			fmt.Fprintf(out, ", it %.2f of the no-op", saturation(shapeRows)/saturation(noopRows))
		}
		fmt.Fprintln(out)
	}
	return nil
}

// pause lets the work one rate left behind (mirror writes, timers) finish
// before the next rate is measured.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(15 * time.Second):
	}
}

func (s *soak) runRate(ctx context.Context, rate float64, d time.Duration) soakRow {
	return runOpenLoop(ctx, rate, d, s.arrive)
}

// runOpenLoop calls arrive rate times a second for d, each in its own
// goroutine, and collects every sample.
func runOpenLoop(ctx context.Context, rate float64, d time.Duration, arrive func(context.Context, time.Time) []sample) soakRow {
	interval := time.Duration(float64(time.Second) / rate)
	began := time.Now()
	var mu sync.Mutex
	var all []sample
	var wg sync.WaitGroup
	for i := 0; ; i++ {
		at := began.Add(time.Duration(i) * interval)
		if at.Sub(began) >= d || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Until(at))
		wg.Go(func() {
			got := arrive(ctx, at)
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return summarise(rate, time.Since(began), all)
}

// arrive is one caller's intent at its scheduled time.
func (s *soak) arrive(ctx context.Context, at time.Time) []sample {
	s.mu.Lock()
	p := s.rng.Float64()
	var victim string
	if n := len(s.confirmed); n > 0 && p >= 0.8 {
		i := s.rng.IntN(n)
		victim = s.confirmed[i]
		s.confirmed = append(s.confirmed[:i], s.confirmed[i+1:]...)
	}
	slot, cal := s.slot()
	resend := s.rng.Float64() < 0.2
	s.mu.Unlock()
	switch {
	case victim != "" && p >= 0.9:
		return []sample{s.post(ctx, at, "/v1/bookings/"+victim+"/cancel", struct{}{})}
	case victim != "":
		key := uuid.NewString()
		r := s.post(ctx, at, "/v1/bookings/"+victim+"/reschedule", edge.RescheduleBody{NewRequestKey: key, Slot: slot, ExpectedPolicyVersion: "demo-2026-11"})
		s.keep(key, r)
		return []sample{r}
	case p >= 0.7: // two callers, one slot
		var a, b sample
		var wg sync.WaitGroup
		wg.Go(func() { a = s.book(ctx, at, uuid.NewString(), slot, cal) })
		wg.Go(func() { b = s.book(ctx, at, uuid.NewString(), slot, cal) })
		wg.Wait()
		return []sample{a, b}
	case resend:
		key := uuid.NewString()
		var a, b sample
		var wg sync.WaitGroup
		wg.Go(func() { a = s.book(ctx, at, key, slot, cal) })
		wg.Go(func() {
			at := at.Add(time.Duration(rand.IntN(300)) * time.Millisecond)
			time.Sleep(time.Until(at))
			b = s.post(ctx, at, "/v1/bookings", api.BookingBody{RequestKey: key, Slot: slot, ExpectedPolicyVersion: "demo-2026-11"})
		})
		wg.Wait()
		return []sample{a, b}
	}
	return []sample{s.book(ctx, at, uuid.NewString(), slot, cal)}
}

// slot is a random half hour within bookable hours, up to a year ahead, so
// that only the callers meant to compete collide.
func (s *soak) slot() (edge.Slot, soakProperty) {
	p := s.props[s.rng.IntN(len(s.props))]
	loc, _ := localtime.LoadZone(p.zone)
	d := s.days[s.rng.IntN(len(s.days))].In(loc)
	start := time.Date(d.Year(), d.Month(), d.Day(), 9+s.rng.IntN(10), 30*s.rng.IntN(2), 0, 0, loc)
	return edge.Slot{PropertyID: p.property, AgentID: p.agent, StartsAt: start.Format(time.RFC3339), TimeZone: p.zone, DurationMinutes: 30}, p
}

func (s *soak) book(ctx context.Context, at time.Time, key string, slot edge.Slot, cal soakProperty) sample {
	r := s.post(ctx, at, "/v1/bookings", api.BookingBody{RequestKey: key, Slot: slot, ExpectedPolicyVersion: "demo-2026-11"})
	if r.status == receipt.StatusConfirmed {
		r.lag, r.mirrored = s.mirrored(ctx, cal, key), true
		s.keep(key, r)
	}
	return r
}

func (s *soak) keep(key string, r sample) {
	if r.status == receipt.StatusConfirmed {
		s.mu.Lock()
		s.confirmed = append(s.confirmed, key)
		s.mu.Unlock()
	}
}

// mirrored polls the fake calendar that holds p's agent's calendar until
// the booking's event is there and returns how long after the
// confirmation that was.
func (s *soak) mirrored(ctx context.Context, p soakProperty, key string) time.Duration {
	began := time.Now()
	for time.Since(began) < time.Minute && ctx.Err() == nil {
		if s.mirroredNow(ctx, p, key) {
			return time.Since(began)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Minute
}

// mirroredNow says whether key's event is in p's agent's calendar now: a
// Google one by its event id, a Microsoft 365 one by the request key it
// carries.
func (s *soak) mirroredNow(ctx context.Context, p soakProperty, key string) bool {
	if p.provider == booking.ProviderMicrosoft {
		var evs []struct {
			Properties map[string]string `json:"properties"`
		}
		q := url.Values{"property": {msgraph.RequestKeyProperty}, "value": {key}}
		if !s.get(ctx, s.graph+"/_fake/events/"+p.calendar+"?"+q.Encode(), &evs) {
			return false
		}
		for _, ev := range evs {
			if ev.Properties[msgraph.RequestKeyProperty] == key {
				return true
			}
		}
		return false
	}
	return s.get(ctx, s.calendar+"/calendar/v3/calendars/"+p.calendar+"/events/"+gcal.EventID(key), nil)
}

// get reports whether url answers 200, decoding its body into out if set.
func (s *soak) get(ctx context.Context, url string, out any) bool {
	return s.fetch(ctx, url, "", out)
}

// getAuthorized is get with the API's key.
func (s *soak) getAuthorized(ctx context.Context, url string, out any) bool {
	return s.fetch(ctx, url, s.token, out)
}

func (s *soak) fetch(ctx context.Context, url, token string, out any) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false
	}
	return out == nil || json.NewDecoder(res.Body).Decode(out) == nil
}

// post sends one call to the next API in turn; when that one answers
// nothing, the same call (each is idempotent: a request key, or a booking
// and its new key) goes once to the one after.
func (s *soak) post(ctx context.Context, at time.Time, path string, body any) sample {
	first := int(s.next.Add(1) % uint64(len(s.apis)))
	out, answered := s.postTo(ctx, at, s.apis[first], path, body)
	if !answered && len(s.apis) > 1 {
		out, _ = s.postTo(ctx, at, s.apis[(first+1)%len(s.apis)], path, body)
		out.failedOver = true
	}
	return out
}

// postTo sends one call to api; answered is false when no HTTP answer came.
func (s *soak) postTo(ctx context.Context, at time.Time, api, path string, body any) (sample, bool) {
	data, _ := json.Marshal(body)
	var wrote atomic.Int64 // set by the transport's writer
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Now().UnixNano()) }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+path, bytes.NewReader(data))
	if err != nil {
		return sample{err: true}, true
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return sample{latency: time.Since(at), err: true}, false
	}
	defer res.Body.Close()
	var r struct {
		receipt.Receipt
		Code      string `json:"code"`
		Retryable bool   `json:"retryable"`
	}
	err = json.NewDecoder(res.Body).Decode(&r)
	out := sample{latency: time.Since(at), late: time.Unix(0, wrote.Load()).Sub(at), status: r.Status, err: err != nil || res.StatusCode >= 500}
	// The API's "never sent" answer under load: an answer, not an error.
	if err == nil && res.StatusCode == http.StatusServiceUnavailable && r.Code == string(booking.CodeUnavailable) && r.Retryable {
		out.err, out.notSent = false, true
	}
	return out, true
}
