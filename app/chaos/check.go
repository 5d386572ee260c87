package chaos

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Invariant is one property the checker holds a run to, and what broke it.
type Invariant struct {
	Name       string
	Violations []string
}

// stored is one booking row.
type stored struct {
	key, id, status, property, agent string
	starts, ends                     time.Time
	// replaces is the booking this one moved, "" for none.
	replaces  string
	committed bool
	// agency is the agency whose row it is; the zero value is the
	// default agency (owner).
	agency agency.Agency
}

// checker holds what a check reads: the history, the store, the fakes,
// and each key's final answer from the API.
type checker struct {
	calls    []Call
	bookings map[string]stored // by request key
	scoped   map[string]stored // by the key mirrors carry (byScopedKey)
	final    map[string]*receipt.Receipt
	events   map[string][]calendar.Event       // by calendar id
	outlook  map[string][]graphtest.GraphEvent // by mailbox
	records  []crm.Record
	// meetings are each agency's HubSpot account's viewings, contacts
	// its callers kept on file and its own; by agency id.
	meetings, contacts map[string][]hubspottest.Object
	// strays are what one agency's accounts hold of another's.
	strays []string
	// hooks are each agency's webhook receiver's deliveries, by id.
	hooks    map[string][]delivery
	inFlight []time.Time // the moments the API was interrupted
	occupied []occupancy
	// refusedLost are confirmed bookings a restored store lost whose ops
	// restore it refused (their slot taken meanwhile): the store decided
	// again, and the caller hears that.
	refusedLost map[string]bool
	messages    messages
}

// occupancy is one live booking's claim on one resource.
type occupancy struct {
	resource   string
	capacity   int
	start, end time.Time
}

// read gathers what the checks need; known are final answers already read
// that need not be asked again.
func (c *cluster) read(ctx context.Context, pool *pgxpool.Pool, calls []Call, interrupts []time.Time, known map[string]*receipt.Receipt) (*checker, error) {
	ch := &checker{calls: calls, bookings: map[string]stored{}, inFlight: interrupts}
	rows, err := pool.Query(ctx, `SELECT request_key, booking_id::text, status, property_id, agent_id, starts_at, ends_at,
    coalesce(replaces_request_key, ''), committed_at IS NOT NULL, agency_no, agency_id FROM booking JOIN agency USING (agency_no)`)
	if err != nil {
		return nil, fmt.Errorf("read bookings: %w", err)
	}
	for rows.Next() {
		var b stored
		if err := rows.Scan(&b.key, &b.id, &b.status, &b.property, &b.agent, &b.starts, &b.ends, &b.replaces, &b.committed, &b.agency.No, &b.agency.ID); err != nil {
			return nil, fmt.Errorf("read bookings: %w", err)
		}
		ch.bookings[b.key] = b
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read bookings: %w", err)
	}
	if ch.occupied, err = occupied(ctx, pool); err != nil {
		return nil, err
	}
	ch.readAccounts(c)
	if err := ch.readMessages(ctx, pool, c); err != nil {
		return nil, err
	}
	ch.final, err = finalAnswers(ctx, c.apiURLs(0)[0], c.keys, calls, known)
	return ch, err
}

// settledAnswers are the final answers that need no second look: decided
// and agreeing with the store.
func (ch *checker) settledAnswers() map[string]*receipt.Receipt {
	unsettled := map[string]bool{}
	for _, v := range append(ch.nonePending(), ch.agreesWithStore()...) {
		unsettled[strings.Fields(v)[0]] = true
	}
	out := map[string]*receipt.Receipt{}
	for k, r := range ch.final {
		if !unsettled[k] {
			out[k] = r
		}
	}
	return out
}

// finalAnswers asks the API for every key the history touched.
// keys are each agency's API key: a request key is asked under its
// agency's.
func finalAnswers(ctx context.Context, url string, apiKeys map[string]string, calls []Call, known map[string]*receipt.Receipt) (map[string]*receipt.Receipt, error) {
	keys := map[string]string{} // request key to its agency's API key
	for _, c := range calls {
		for _, k := range []string{c.Key, c.NewKey} {
			if _, ok := known[k]; k != "" && !ok {
				keys[k] = apiKeys[cmp.Or(c.Agency, agency.Default.ID)]
			}
		}
	}
	out := make(map[string]*receipt.Receipt, len(keys)+len(known))
	maps.Copy(out, known)
	var mu sync.Mutex
	var firstErr error
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range work {
				r, err := status(ctx, url, keys[k], k)
				mu.Lock()
				out[k] = r
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	return out, firstErr
}

// status is GET /v1/bookings/{key}; nil when the API knows no such key.
func (ch *checker) check() []Invariant {
	return []Invariant{
		{"no resource over capacity", ch.capacity()},
		{"confirmed stays confirmed", ch.confirmedStays()},
		{"no key answered not found or refused books", ch.refusedStaysUnbooked()},
		{"last answer agrees with the store", ch.agreesWithStore()},
		{"one booking id per key", ch.oneBookingPerKey()},
		{"a move's booking names the one it moved", ch.movesLinked()},
		{"no key left pending", ch.nonePending()},
		{"one event and one CRM record per live booking", append(ch.mirrors(), ch.outlookMirrors()...)},
		{"every 5xx says retryable", ch.retryable5xx()},
		{"every call in flight at a SIGINT answered", ch.answeredAtSIGINT()},
		{"every consenting caller told of their booking's last change", ch.callersTold()},
		{"no message for a booking never confirmed", ch.messagedOnlyIfBooked()},
		{"every caller told pending hears how it settled", ch.pendingSettledTold()},
		{"no text after a caller's STOP", ch.stoppedStaysStopped()},
		{"a reply not understood answered once a day", ch.answeredOnce()},
		{"each agency's calls book in that agency alone", ch.agenciesApart()},
	}
}

func occupied(ctx context.Context, pool *pgxpool.Pool) ([]occupancy, error) {
	// A resource is an agency's: its id is its agency's alone.
	rows, err := pool.Query(ctx, `SELECT a.agency_id || '/' || br.resource_id, r.capacity, lower(br.occupied), upper(br.occupied)
		FROM booking_resource br JOIN resource r USING (agency_no, resource_id) JOIN agency a USING (agency_no) WHERE br.live`)
	if err != nil {
		return nil, fmt.Errorf("read occupancy: %w", err)
	}
	var out []occupancy
	for rows.Next() {
		var o occupancy
		if err := rows.Scan(&o.resource, &o.capacity, &o.start, &o.end); err != nil {
			return nil, fmt.Errorf("read occupancy: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// capacity sweeps each resource's live claims in time order: at no
// instant may more overlap than its capacity.
func (ch *checker) capacity() []string {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := map[string][]edge{}
	capacity := map[string]int{}
	for _, o := range ch.occupied {
		capacity[o.resource] = o.capacity
		edges[o.resource] = append(edges[o.resource], edge{o.start, 1}, edge{o.end, -1})
	}
	var bad []string
	for res, es := range edges {
		// An end and a start at one instant don't overlap: ends go first.
		sort.Slice(es, func(i, j int) bool {
			return es[i].at.Before(es[j].at) || es[i].at.Equal(es[j].at) && es[i].delta < es[j].delta
		})
		n := 0
		for _, e := range es {
			if n += e.delta; n > capacity[res] {
				bad = append(bad, fmt.Sprintf("%s holds %d bookings at %s, capacity %d", res, n, e.at.Format(time.RFC3339), capacity[res]))
			}
		}
	}
	return bad
}

// settling reports whether the checks that recovery can still change
// (decisions of pending keys, mirror writes, messages backing off or
// waiting for a sender that lost its worker) are failing.
func (ch *checker) settling() bool {
	return len(ch.nonePending()) > 0 || len(ch.mirrors()) > 0 || len(ch.agreesWithStore()) > 0 || len(ch.callersTold()) > 0
}

// confirmedStays: a key ever answered confirmed is confirmed in the store
// with the same booking and times, unless its own cancel or reschedule
// was sent.
func (ch *checker) confirmedStays() []string {
	var bad []string
	changed := map[string]bool{}
	for _, c := range ch.calls {
		if changes(c.Op) {
			changed[c.Key] = true
		}
	}
	seen := map[string]bool{}
	for _, c := range ch.calls {
		r := c.Receipt
		if r == nil || r.Status != receipt.StatusConfirmed || seen[r.RequestKey] {
			continue
		}
		seen[r.RequestKey] = true
		b, ok := ch.bookings[r.RequestKey]
		switch {
		case !ok && ch.refusedLost[r.RequestKey]:
		case !ok:
			bad = append(bad, fmt.Sprintf("%s was answered confirmed; the store has no booking", r.RequestKey))
		case b.id != r.BookingID || r.StartsAt == nil || !b.starts.Equal(*r.StartsAt) || !b.ends.Equal(*r.EndsAt):
			bad = append(bad, fmt.Sprintf("%s was answered confirmed as %s; the store has %s %s-%s", r.RequestKey, r.BookingID, b.id, b.starts, b.ends))
		case b.status != string(booking.StatusConfirmed) && !changed[r.RequestKey]:
			bad = append(bad, fmt.Sprintf("%s was answered confirmed; the store has it %s, and no cancel or reschedule was sent", r.RequestKey, b.status))
		}
	}
	return bad
}

// changes reports whether a call of op may cancel or move its booking:
// the API's cancel and reschedule, and the caller's page's.
func changes(op string) bool {
	return op == "cancel" || op == "reschedule" || op == "page-cancel" || op == "page-move"
}

// refusedStaysUnbooked: a key answered with a definite refusal, or "not
// found" (a cancel or a move of it, its last read), was never booked
// afterwards: the store holds no booking of it that was ever confirmed. A
// key whose call is pending is never answered not found (S71).
func (ch *checker) refusedStaysUnbooked() []string {
	told := map[string]string{} // key: what it was answered
	for _, c := range ch.calls {
		switch r := c.Receipt; {
		case c.Outcome == Fail && r != nil:
			told[r.RequestKey] = string(r.Status)
		case c.HTTP == http.StatusNotFound && !strings.HasPrefix(c.Op, "page-"): // a page's 404 is a link it does not know
			told[c.Key] = "not found by a " + c.Op
		}
	}
	for k, r := range ch.final {
		if r == nil {
			told[k] = "not found by its last read"
		}
	}
	var bad []string
	for key, said := range told {
		if b, ok := ch.bookings[key]; ok && b.status != string(booking.StatusHeld) && b.status != string(booking.StatusExpired) {
			bad = append(bad, fmt.Sprintf("%s was answered %s; the store has it %s", key, said, b.status))
		}
	}
	sort.Strings(bad)
	return bad
}

// agreesWithStore: once recovered, the API's answer for every key is the
// store's.
func (ch *checker) agreesWithStore() []string {
	want := map[string]receipt.Status{
		string(booking.StatusConfirmed): receipt.StatusConfirmed, string(booking.StatusHeld): receipt.StatusHeld,
		string(booking.StatusCancelled): receipt.StatusCancelled, string(booking.StatusExpired): receipt.StatusExpired,
		string(booking.StatusReleasedForReschedule): receipt.StatusRescheduled,
	}
	var bad []string
	for k, r := range ch.final {
		b, booked := ch.bookings[k]
		switch {
		case r == nil:
		case booked && r.Status != want[b.status] && !(r.Status == receipt.StatusReassigned && ch.agentAloneChanged(k)):
			bad = append(bad, fmt.Sprintf("%s is answered %s; the store has it %s (%s)", k, r.Status, b.status, ch.callsOn(k)))
		case !booked && (r.Status == receipt.StatusConfirmed || r.Status == receipt.StatusHeld || r.Status == receipt.StatusCancelled || r.Status == receipt.StatusRescheduled):
			bad = append(bad, fmt.Sprintf("%s is answered %s; the store has no booking", k, r.Status))
		}
	}
	sort.Strings(bad)
	return bad
}

// agentAloneChanged reports whether key's moves kept its property and
// time and end in a confirmed booking: the desk words such a booking
// reassigned (desk.reassigned), whoever moved it.
func (ch *checker) agentAloneChanged(key string) bool {
	was := ch.bookings[key]
	for range 10 {
		next, ok := ch.movedTo(key)
		if !ok || next.property != was.property || !next.starts.Equal(was.starts) || !next.ends.Equal(was.ends) {
			return false
		}
		switch next.status {
		case string(booking.StatusConfirmed):
			return true
		case string(booking.StatusReleasedForReschedule):
			key = next.key
		default:
			return false
		}
	}
	return false
}

// movedTo is the booking that moved key's.
func (ch *checker) movedTo(key string) (stored, bool) {
	for _, b := range ch.bookings {
		if b.replaces == key {
			return b, true
		}
	}
	return stored{}, false
}

func (ch *checker) oneBookingPerKey() []string {
	ids := map[string][]string{}
	for _, c := range ch.calls {
		if r := c.Receipt; r != nil && r.BookingID != "" && !slices.Contains(ids[r.RequestKey], r.BookingID) {
			ids[r.RequestKey] = append(ids[r.RequestKey], r.BookingID)
		}
	}
	var bad []string
	for k, v := range ids {
		if len(v) > 1 {
			bad = append(bad, fmt.Sprintf("%s was answered with bookings %s", k, strings.Join(v, ", ")))
		}
	}
	return bad
}

// movesLinked: a key sent only as a reschedule's new key books, if it
// books at all, the move of that booking: the store links the two (and
// so the caller, their messages and their CRM contact).
func (ch *checker) movesLinked() []string {
	var bad []string
	seen := map[string]bool{}
	for _, c := range ch.calls {
		b, ok := ch.bookings[c.NewKey]
		if c.Op != "reschedule" || !ok || seen[c.NewKey] || b.replaces == c.Key {
			continue
		}
		seen[c.NewKey] = true
		bad = append(bad, fmt.Sprintf("%s was booked as a move of %s, and the store links it to %q", c.NewKey, c.Key, b.replaces))
	}
	return bad
}

// nonePending: after recovery every key the API was told about has a
// decided answer.
func (ch *checker) nonePending() []string {
	answered := map[string]bool{}
	for _, c := range ch.calls {
		if c.Receipt != nil { // a call not sent answers an error, no receipt
			answered[c.Key] = true
			answered[c.NewKey] = true
		}
	}
	var bad []string
	for k, r := range ch.final {
		switch {
		case r == nil && answered[k]:
			bad = append(bad, fmt.Sprintf("%s had an answer, but the API no longer knows it (%s)", k, ch.callsOn(k)))
		case r != nil && (r.Status == receipt.StatusPending || r.Status == receipt.StatusOffered && ch.bookings[k].id != ""):
			bad = append(bad, fmt.Sprintf("%s is still %s", k, r.Status))
		}
	}
	return bad
}

func (ch *checker) retryable5xx() []string {
	var bad []string
	for _, c := range ch.calls {
		receiptSays := c.Receipt != nil && (c.Receipt.Status == receipt.StatusPending || c.Receipt.Reason != nil && c.Receipt.Reason.Retryable)
		if c.HTTP >= 500 && !receiptSays && !c.Retryable {
			bad = append(bad, fmt.Sprintf("%s %s: http %d that does not say it is retryable", c.Op, c.Key, c.HTTP))
		}
	}
	return bad
}

func (ch *checker) answeredAtSIGINT() []string {
	var bad []string
	for _, t := range ch.inFlight {
		for _, c := range ch.calls {
			if c.Start.Before(t) && c.End.After(t) && c.HTTP == 0 && !refused(c.Err) {
				bad = append(bad, fmt.Sprintf("%s %s, in flight at %s, got no answer: %s", c.Op, c.Key, t.Format(time.TimeOnly), c.Err))
			}
		}
	}
	return bad
}
