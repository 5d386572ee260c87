package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The soak looks for each booking's event in the calendar that holds it:
// Hugo's is in the fake Microsoft 365 tenant, the others' in the fake
// Google Calendar.
func TestTheSoakLooksInTheCalendarThatHoldsTheBooking(t *testing.T) {
	t.Parallel()
	google, graph := gcaltest.NewCalendar(), graphtest.NewGraph(graphtest.GraphApp{}, devstack.HugoMailbox)
	gsrv, msrv := httptest.NewServer(google), httptest.NewServer(graph)
	t.Cleanup(gsrv.Close)
	t.Cleanup(msrv.Close)
	s := &soak{calendar: gsrv.URL, graph: msrv.URL, http: http.DefaultClient}
	ctx := context.Background()

	// As the dev stack's catalogue has them (GET /v1/resources/{agent}).
	hugo := soakProperty{property: "paris-loft-3", agent: "agent-hugo", zone: "Europe/Paris",
		calendar: devstack.HugoMailbox, provider: booking.ProviderMicrosoft}
	claire := soakProperty{property: "paris-marais-12", agent: "agent-claire", zone: "Europe/Paris",
		calendar: "claire@demo.bookingsaga", provider: booking.ProviderGoogle}
	require.False(t, s.mirroredNow(ctx, hugo, "key-h"))
	graph.Put(devstack.HugoMailbox, graphtest.GraphEvent{Subject: "viewing", Properties: map[string]string{msgraph.RequestKeyProperty: "key-h"}})
	require.True(t, s.mirroredNow(ctx, hugo, "key-h"), "Hugo's event is in Microsoft 365")

	require.False(t, s.mirroredNow(ctx, claire, "key-c"))
	google.Put(claire.calendar, &calendar.Event{Id: gcal.EventID("key-c"), Summary: "viewing"})
	require.True(t, s.mirroredNow(ctx, claire, "key-c"), "Claire's is in Google Calendar")
	require.False(t, s.mirroredNow(ctx, hugo, "key-c"))
}

// Calls go to the APIs in turn; one that answers nothing (a process
// killed mid-load) has its call sent again, same body, to the next.
func TestTheSoakSendsACallNoAPIAnsweredToTheNext(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(receipt.Receipt{Status: receipt.StatusConfirmed})
	}))
	t.Cleanup(live.Close)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // its port now refuses
	s := &soak{apis: []string{dead.URL, live.URL}, http: live.Client()}
	ctx := context.Background()

	body := api.BookingBody{RequestKey: "k1", Slot: edge.Slot{PropertyID: "paris-loft-3", TimeZone: "Europe/Paris"}}
	want, err := json.Marshal(body)
	require.NoError(t, err)
	var got []sample
	for range 4 {
		got = append(got, s.post(ctx, time.Now(), "/v1/bookings", body))
	}
	failedOver := 0
	for _, g := range got {
		require.Equal(t, receipt.StatusConfirmed, g.status)
		require.False(t, g.err)
		if g.failedOver {
			failedOver++
		}
	}
	require.Equal(t, 2, failedOver, "every other call went first to the dead API")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 4, "the dead API took none")
	for _, b := range bodies {
		require.Equal(t, "/v1/bookings "+string(want), b)
	}
	require.Equal(t, 2, summarise(1, time.Second, got).failedOver)
}

// A rate's row tells what a caller whose call was taken waited apart from
// the calls shed at once, and counts confirmed answers a second.
func TestTheSoakTellsAdmittedCallsFromShedOnes(t *testing.T) {
	t.Parallel()
	var all []sample
	for i := range 100 {
		all = append(all, sample{latency: time.Duration(100+i) * time.Millisecond, status: receipt.StatusConfirmed})
		all = append(all, sample{latency: 5 * time.Millisecond, notSent: true})
	}
	all = append(all, sample{latency: 3 * time.Second, status: receipt.StatusPending})
	row := summarise(40, 10*time.Second, all)
	require.Equal(t, 195*time.Millisecond, row.admittedP95, "101 admitted: the pending one counts")
	require.Equal(t, 199*time.Millisecond, row.admittedP99)
	require.Equal(t, 5*time.Millisecond, row.notSentP99)
	require.InDelta(t, 10.0, row.confirmed, 1e-9)
	require.InDelta(t, 100.0/201, row.notSent, 1e-9)
}

// Saturation is the most confirmed answers a second the rates measured,
// at any rate whose calls were answered: the no-op's ladder doubles and
// stops at the first rate past the commit wait, so counting only the rates
// under it read 40/s for an engine that confirmed 79.5/s, and the ratio
// 0.59 for one of 0.30 (2026-12-07).
func TestSaturationCountsARateThatAnsweredPastTheWait(t *testing.T) {
	t.Parallel()
	noop := []soakRow{
		{rate: 40, calls: 1200, confirmed: 40, admittedP99: 162 * time.Millisecond},
		{rate: 80, calls: 2400, confirmed: 79.5, admittedP99: 4649 * time.Millisecond},
		{rate: 160, calls: 4800, errors: 139, confirmed: 90, admittedP99: 70 * time.Second},
	}
	require.True(t, noop[1].saturated(), "the ladder still stops past the wait")
	require.InDelta(t, 79.5, saturation(noop), 1e-9, "a rate whose calls failed is not counted")
	require.Zero(t, saturation([]soakRow{{rate: 20}}), "a rate nobody answered")
}

// How late a call left the soak is told apart from what the service took
// once it had it: on a box the soak shares, the first is the soak's own
// queue for a core.
func TestTheSoakTellsItsOwnLatenessFromTheServices(t *testing.T) {
	t.Parallel()
	var all []sample
	for i := range 100 {
		all = append(all, sample{latency: time.Duration(300+i) * time.Millisecond, late: time.Duration(200+i) * time.Millisecond})
	}
	all = append(all, sample{latency: 5 * time.Millisecond, late: time.Second, notSent: true})
	row := summarise(40, 10*time.Second, all)
	require.Equal(t, 395*time.Millisecond, row.admittedP95)
	require.Equal(t, 295*time.Millisecond, row.sentLateP95, "a call shed is not counted")
	require.Equal(t, 100*time.Millisecond, row.fromSentP95)
}

// The statement table names who issues each of the store's heaviest
// statements, as pg_stat_statements shows them (normalised).
func TestEachStatementIsNamedByWhoIssuesIt(t *testing.T) {
	t.Parallel()
	for q, who := range map[string]string{
		"SELECT set_config('bookingsaga.agency', $1, true)":                                                                                                 "every transaction",
		"SELECT EXISTS (SELECT FROM booking WHERE reference = request_reference($1) AND x)":                                                                 "commit",
		"SELECT rb.resource_id, rb.occ_from, rb.occ_to, lower(o.occupied), upper(o.occupied), o.booking_id, o.status":                                       "commit",
		"WITH locked AS ( -- judged: the resource's rules":                                                                                                  "commit",
		"k IS NOT NULL AND NEW.booking_id IS NOT NULL AND (EXISTS ...) INSERT INTO caller_message (request_key, kind, event_id) VALUES (NEW.request_key, k": "outbox and sender",
		"SELECT r.id, lower(lo.occupied), upper(lo.occupied) FROM unnest($1::text[]) AS r(id) CROSS JOIN LATERAL live_occupancy(r.id, x)":                   "API: availability",
		"WITH b AS ( SELECT booking_id, nullif($2::text, provider_event_id) AS event_id ) INSERT INTO booking_event (request_key":                           "mirrors",
		"SELECT booking_id, request_key, status, property_id FROM booking WHERE request_key = $1":                                                           "booking reads",
		"WITH RECURSIVE chain (request_key, depth, up) AS ( SELECT $1::text":                                                                                "contacts",
		"k IS NOT NULL AND NEW.booking_id IS NOT NULL AND ( EXISTS (SELECT $18 FROM booking_contact c WHERE":                                                "outbox and sender",
		"SELECT k.data_key, k.erased_at IS NOT NULL, coalesce(c.sealed, r.contact_sealed) LEFT JOIN booking_refusal r":                                      "contacts",
		"UPDATE booking SET status = $4, released_at = $2 WHERE booking_id = $1":                                                                            "commit",
		"SELECT frobnicate()": "other",
	} {
		require.True(t, strings.HasPrefix(issuer(q), who), "%q: %s", q, issuer(q))
	}
}
