package chaos

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

var t0 = time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC)

func confirmed(key, id string) *receipt.Receipt {
	start, end := t0, t0.Add(30*time.Minute)
	return &receipt.Receipt{RequestKey: key, Status: receipt.StatusConfirmed, BookingID: id, StartsAt: &start, EndsAt: &end}
}

// violations returns each invariant's count, by name.
func violations(ch *checker) map[string]int {
	out := map[string]int{}
	for _, inv := range ch.check() {
		if len(inv.Violations) > 0 {
			out[inv.Name] = len(inv.Violations)
		}
	}
	return out
}

// healthy is two confirmed bookings, mirrored, answered alike everywhere:
// k1 on a property of the generic CRM, k2 (kept on file) on HubSpot's.
func healthy() *checker {
	event := func(key string) calendar.Event {
		return calendar.Event{Id: gcal.EventID(key), Status: "confirmed",
			Start: &calendar.EventDateTime{DateTime: t0.Format(time.RFC3339)}, End: &calendar.EventDateTime{DateTime: t0.Add(30 * time.Minute).Format(time.RFC3339)}}
	}
	return &checker{
		calls: []Call{{Op: "book", Key: "k1", HTTP: 200, Receipt: confirmed("k1", "b1"), Outcome: OK}},
		bookings: map[string]stored{
			"k1": {key: "k1", id: "b1", status: "confirmed", property: "flat-1", agent: "agent-1", starts: t0, ends: t0.Add(30 * time.Minute)},
			"k2": {key: "k2", id: "b2", status: "confirmed", property: hubspotProperty, agent: "agent-3", starts: t0, ends: t0.Add(30 * time.Minute)},
		},
		final:  map[string]*receipt.Receipt{"k1": confirmed("k1", "b1")},
		events: map[string][]calendar.Event{"flat-1@chaos.test": {event("k1")}, hubspotProperty + "@chaos.test": {event("k2")}},
		contacts: map[string][]hubspottest.Object{def: append([]hubspottest.Object{{ID: "c1", Properties: map[string]string{"phone": phoneFor("k2")}}},
			agencyObjects()...)},
		meetings: map[string][]hubspottest.Object{def: {{ID: "m1", Contacts: []string{"c1"}, Properties: map[string]string{"bookingsaga_booking_id": "b2",
			"hs_meeting_outcome": "SCHEDULED", "hs_meeting_start_time": "2026-12-10T09:00:00.000Z", "hs_meeting_end_time": "2026-12-10T09:30:00.000Z"}}}},
		outlook: map[string][]graphtest.GraphEvent{"agent-1@chaos.test": {{ID: "AAMk1", Start: t0, End: t0.Add(30 * time.Minute),
			Properties: map[string]string{msgraph.RequestKeyProperty: "k1"}}}},
		records:  []crm.Record{{ID: "r1", Viewing: crm.Viewing{BookingID: "b1", Status: crm.StatusScheduled}}},
		hooks:    map[string][]delivery{def: {{kind: "booking.confirmed", bookingID: "b1"}}},
		occupied: []occupancy{{resource: "flat-1", capacity: 1, start: t0, end: t0.Add(30 * time.Minute)}},
	}
}

func TestTheCheckerPassesAHealthyRun(t *testing.T) {
	t.Parallel()
	require.Empty(t, violations(healthy()))
	ch := healthy()
	lyonsBooking(ch)
	require.Empty(t, violations(ch), "and with the second agency's booking in its own accounts")
}

func TestTheCheckerCatchesEachKindOfLie(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		breakIt func(*checker)
		want    string
	}{
		"a confirmed booking the store lacks": {func(ch *checker) { delete(ch.bookings, "k1") }, "confirmed stays confirmed"},
		"a cancel nobody asked for": {func(ch *checker) {
			b := ch.bookings["k1"]
			b.status = "cancelled"
			ch.bookings["k1"] = b
		}, "confirmed stays confirmed"},
		"a refusal the store booked": {func(ch *checker) {
			ch.calls[0].Receipt = &receipt.Receipt{RequestKey: "k1", Status: receipt.StatusConflict}
			ch.calls[0].Outcome = Fail
		}, "no key answered not found or refused books"},
		"a cancel answered not found, then booked": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Op: "cancel", Key: "k2", HTTP: http.StatusNotFound, Outcome: Unknown})
		}, "no key answered not found or refused books"},
		"a last read not found of a booked key": {func(ch *checker) { ch.final["k2"] = nil }, "no key answered not found or refused books"},
		"two bookings for one key": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Op: "book", Key: "k1", HTTP: 200, Receipt: confirmed("k1", "b2"), Outcome: OK})
		}, "one booking id per key"},
		"a pending key after recovery": {func(ch *checker) {
			ch.final["k1"] = &receipt.Receipt{RequestKey: "k1", Status: receipt.StatusPending}
		}, "no key left pending"},
		"an agency's contact deleted": {func(ch *checker) { ch.contacts[def] = ch.contacts[def][:len(ch.contacts[def])-1] },
			"one event and one CRM record per live booking"},
		"a missing calendar event": {func(ch *checker) { ch.events["flat-1@chaos.test"] = nil }, "one event and one CRM record per live booking"},
		"a booking in another agency than its caller's": {func(ch *checker) {
			b := ch.bookings["k1"]
			b.agency = agency.Agency{No: 2, ID: secondAgency}
			ch.bookings["k1"] = b
		}, "each agency's calls book in that agency alone"},
		"another agency's booking in this agency's calendar": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Agency: secondAgency, Op: "book", Key: "k3", HTTP: 200, Receipt: confirmed("k3", "b3"), Outcome: OK})
			ch.bookings["k3"] = stored{key: "k3", id: "b3", status: "confirmed", property: "flat-2", agent: "agent-2", starts: t0,
				ends: t0.Add(30 * time.Minute), agency: agency.Agency{No: 2, ID: secondAgency}}
			ch.final["k3"] = confirmed("k3", "b3")
			ch.records = append(ch.records, crm.Record{ID: "r3", Viewing: crm.Viewing{BookingID: "b3", Status: crm.StatusScheduled}})
			ev := ch.events["flat-1@chaos.test"][0]
			ev.Id = gcal.EventID("agency:lyon:k3")
			ch.events["flat-2@chaos.test"] = []calendar.Event{ev}
		}, "one event and one CRM record per live booking"},
		"a missing Microsoft 365 event": {func(ch *checker) { ch.outlook["agent-1@chaos.test"] = nil }, "one event and one CRM record per live booking"},
		"a second Microsoft 365 event": {func(ch *checker) {
			ch.outlook["agent-1@chaos.test"] = append(ch.outlook["agent-1@chaos.test"], ch.outlook["agent-1@chaos.test"][0])
		}, "one event and one CRM record per live booking"},
		"a Microsoft 365 event left by a cancel": {func(ch *checker) {
			b := ch.bookings["k1"]
			b.status = "cancelled"
			ch.bookings["k1"] = b
			ch.events["flat-1@chaos.test"] = nil
			ch.records = nil
			ch.calls, ch.final = nil, nil
			ch.occupied = nil
		}, "one event and one CRM record per live booking"},
		"a second CRM record": {func(ch *checker) {
			ch.records = append(ch.records, crm.Record{ID: "r2", Viewing: crm.Viewing{BookingID: "b1", Status: crm.StatusScheduled}})
		}, "one event and one CRM record per live booking"},
		"a missing HubSpot meeting": {func(ch *checker) { ch.meetings[def] = nil }, "one event and one CRM record per live booking"},
		"a HubSpot meeting at other times": {func(ch *checker) {
			ch.meetings[def][0].Properties["hs_meeting_start_time"] = "2026-12-10T09:30:00.000Z"
		}, "one event and one CRM record per live booking"},
		"a meeting on no contact for a caller kept on file": {func(ch *checker) { ch.meetings[def][0].Contacts = nil }, "one event and one CRM record per live booking"},
		"a caller twice a contact": {func(ch *checker) {
			ch.contacts[def] = append(ch.contacts[def], hubspottest.Object{ID: "c2", Properties: map[string]string{"phone": phoneFor("k2")}})
		}, "one event and one CRM record per live booking"},
		"a meeting on another caller's contact": {func(ch *checker) {
			ch.contacts[def] = append(ch.contacts[def], hubspottest.Object{ID: "c2", Properties: map[string]string{"phone": phoneFor("k3")}})
			ch.meetings[def][0].Contacts = []string{"c2"}
		}, "one event and one CRM record per live booking"},
		"a meeting left scheduled by a cancel": {func(ch *checker) {
			b := ch.bookings["k2"]
			b.status = "cancelled"
			ch.bookings["k2"] = b
			ch.events[hubspotProperty+"@chaos.test"] = nil
		}, "one event and one CRM record per live booking"},
		"the generic CRM's viewing in HubSpot": {func(ch *checker) {
			ch.meetings[def] = append(ch.meetings[def], hubspottest.Object{ID: "m2", Properties: map[string]string{"bookingsaga_booking_id": "b1"}})
		}, "one event and one CRM record per live booking"},
		"another agency's viewing in this agency's HubSpot": {func(ch *checker) {
			lyonsBooking(ch)
			m := ch.meetings[def][0]
			m.ID, m.Properties = "m3", map[string]string{"bookingsaga_booking_id": "b3", "hs_meeting_outcome": "SCHEDULED",
				"hs_meeting_start_time": "2026-12-10T09:00:00.000Z", "hs_meeting_end_time": "2026-12-10T09:30:00.000Z"}
			ch.meetings[def] = append(ch.meetings[def], m)
		}, "one event and one CRM record per live booking"},
		"another agency's text through this agency's account": {func(ch *checker) {
			lyonsBooking(ch)
			ch.messages.received = append(ch.messages.received, quoted{account: def, ref: receipt.Reference("k3")})
		}, "no message for a booking never confirmed"},
		"another agency's event in this agency's calendar account": {func(ch *checker) {
			ch.strays = []string{"lyon's calendar flat-1@lyon.chaos.test has 1 events in default's account"}
		}, "each agency's calls book in that agency alone"},
		"another agency's webhook at this agency's receiver": {func(ch *checker) {
			lyonsBooking(ch)
			ch.hooks[def] = append(ch.hooks[def], delivery{kind: "booking.confirmed", bookingID: "b3"})
		}, "each agency's calls book in that agency alone"},
		"an agency's receiver that got nothing": {func(ch *checker) {
			lyonsBooking(ch)
			ch.hooks[secondAgency] = nil
		}, "each agency's calls book in that agency alone"},
		"a text undeliverable after its caller's STOP": {func(ch *checker) {
			ch.messages.stopped = map[string]time.Time{"k1": t0}
			ch.messages.outbox = map[string]map[booking.MessageKind]booking.MessageStatus{"k1": {booking.MessageConfirmed: booking.MessageUndeliverable}}
		}, "no text after a caller's STOP"},
		"a move booked as a booking of its own": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Op: "reschedule", Key: "k1", NewKey: "k2", HTTP: 200, Receipt: confirmed("k2", "b2"), Outcome: OK})
		}, "a move's booking names the one it moved"},
		"an overbooked flat": {func(ch *checker) {
			ch.occupied = append(ch.occupied, occupancy{resource: "flat-1", capacity: 1, start: t0.Add(29 * time.Minute), end: t0.Add(time.Hour)})
		}, "no resource over capacity"},
		"a 5xx that is not retryable": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Op: "book", Key: "k2", HTTP: 503, Receipt: &receipt.Receipt{RequestKey: "k2", Status: receipt.StatusRejected}, Outcome: Unknown})
		}, "every 5xx says retryable"},
		"a call dropped at SIGINT": {func(ch *checker) {
			ch.calls = append(ch.calls, Call{Op: "book", Key: "k3", Start: t0, End: t0.Add(time.Second), Err: "EOF", Outcome: Unknown})
			ch.inFlight = []time.Time{t0.Add(time.Millisecond)}
		}, "every call in flight at a SIGINT answered"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ch := healthy()
			tc.breakIt(ch)
			require.Contains(t, violations(ch), tc.want)
		})
	}
}

func TestBackToBackBookingsDoNotOverlap(t *testing.T) {
	t.Parallel()
	ch := healthy()
	ch.occupied = append(ch.occupied, occupancy{resource: "flat-1", capacity: 1, start: t0.Add(30 * time.Minute), end: t0.Add(time.Hour)})
	require.Empty(t, ch.capacity())
}

// The report names the slowest answer of each call, and the slowest of
// those in flight while PostgreSQL was frozen.
func TestTheReportShowsTheSlowestAnswerWhileFrozen(t *testing.T) {
	t.Parallel()
	freeze := FaultResult{Name: frozenFault, At: t0.Add(10 * time.Second), Restored: t0.Add(30 * time.Second)}
	r := Report{Faults: []FaultResult{freeze}, Calls: []Call{
		{Op: "reschedule", HTTP: 200, Start: t0, End: t0.Add(4 * time.Second), Outcome: OK},                             // before the freeze
		{Op: "reschedule", HTTP: 200, Start: t0.Add(12 * time.Second), End: t0.Add(15 * time.Second), Outcome: Unknown}, // during it
		{Op: "reschedule", HTTP: 0, Start: t0.Add(13 * time.Second), End: t0.Add(40 * time.Second), Outcome: Unknown},   // never answered
		{Op: "book", HTTP: 200, Start: t0.Add(29 * time.Second), End: t0.Add(31500 * time.Millisecond), Outcome: OK},    // across the thaw
	}}
	var out strings.Builder
	r.Print(&out)
	require.Regexp(t, `reschedule\s+3\s+1\s+0\s+2\s+0\s+0\s+4s\s+3s`, out.String())
	require.Regexp(t, `book\s+1\s+1\s+0\s+0\s+0\s+0\s+2\.5s\s+2\.5s`, out.String())
}

// A fault's row counts the bookings confirmed while it lasted, and the
// first one confirmed by a call sent after it was mended.
func TestRecoveriesCountWhatWasConfirmedWhileDown(t *testing.T) {
	t.Parallel()
	f := FaultResult{Name: "pair down", At: t0, Restored: t0.Add(4 * time.Second)}
	call := func(start, end time.Duration, r *receipt.Receipt) Call {
		return Call{Start: t0.Add(start), End: t0.Add(end), Receipt: r}
	}
	refused := &receipt.Receipt{Status: receipt.StatusConflict}
	calls := []Call{
		call(-time.Second, time.Second, confirmed("before", "b0")), // sent before it broke
		call(time.Second, 2*time.Second, confirmed("k1", "b1")),
		call(time.Second, 2*time.Second, refused),
		call(3*time.Second, 5*time.Second, confirmed("k2", "b2")), // answered after
		call(6*time.Second, 7*time.Second, confirmed("k3", "b3")),
	}
	got := recoveries([]FaultResult{f}, calls)
	require.Equal(t, 1, got[0].ConfirmedWhileDown)
	require.Equal(t, t0.Add(7*time.Second), got[0].Recovered)
}

// A 503 receipt "rejected, retryable" says nothing was sent, so an API that
// never heard of the key afterwards tells the truth; one that answered the
// key pending and then forgot it does not.
func TestAKeyNeverSentNeedNotBeKnown(t *testing.T) {
	t.Parallel()
	// A call not sent answers a retryable error and no receipt.
	ch := healthy()
	ch.calls = append(ch.calls, Call{Op: "book", Key: "k9", HTTP: 503, Retryable: true, Outcome: Unknown},
		Call{Op: "book", Key: "k9", HTTP: 503, Retryable: true, Outcome: Unknown})
	ch.final["k9"] = nil
	require.Empty(t, violations(ch))

	ch.calls = append(ch.calls, Call{Op: "book", Key: "k9", HTTP: 202,
		Receipt: &receipt.Receipt{RequestKey: "k9", Status: receipt.StatusPending}, Outcome: Unknown})
	require.Equal(t, map[string]int{"no key left pending": 1}, violations(ch))
}

// A caller who was not told is named with what happened to the key: its
// events, whether a contact rests with it, and the calls that sent it.
func TestAnUntoldCallerIsNamedWithTheKeysTrail(t *testing.T) {
	t.Parallel()
	ch := healthy()
	require.Equal(t, booking.ChannelSMS, channelFor("9x"), "a key whose caller agreed to texts")
	ch.bookings["9x"] = stored{key: "9x", id: "b9", status: "cancelled", committed: true}
	ch.messages.trail = map[string]string{"9x": "events: committed cancelled; contact stored: false"}
	ch.calls = append(ch.calls, Call{Op: "book", Key: "9x", Start: t0, HTTP: 200, Receipt: confirmed("9x", "b9"), Outcome: OK})
	bad := ch.callersTold()
	require.Len(t, bad, 1)
	require.Contains(t, bad[0], "9x is cancelled and its caller was not told")
	require.Contains(t, bad[0], "contact stored: false")
	require.Contains(t, bad[0], "book 9x@")
}

// agencyObjects are agencyContacts as the fake lists them.
// def is the default agency, whose accounts are the deployment's.
const def = "default"

// lyonsBooking adds k3, the second agency's booking, mirrored to its own
// accounts.
func lyonsBooking(ch *checker) {
	ch.calls = append(ch.calls, Call{Agency: secondAgency, Op: "book", Key: "k3", HTTP: 200, Receipt: confirmed("k3", "b3"), Outcome: OK})
	ch.bookings["k3"] = stored{key: "k3", id: "b3", status: "confirmed", property: "flat-2", agent: "agent-2", starts: t0,
		ends: t0.Add(30 * time.Minute), agency: agency.Agency{No: 2, ID: secondAgency}, committed: true}
	ch.final["k3"] = confirmed("k3", "b3")
	ev := ch.events["flat-1@chaos.test"][0]
	ev.Id = gcal.EventID("agency:lyon:k3")
	ch.events["flat-2@lyon.chaos.test"] = []calendar.Event{ev}
	m := ch.meetings[def][0]
	m.ID, m.Contacts, m.Properties = "m-lyon", nil, map[string]string{"bookingsaga_booking_id": "b3", "hs_meeting_outcome": "SCHEDULED",
		"hs_meeting_start_time": "2026-12-10T09:00:00.000Z", "hs_meeting_end_time": "2026-12-10T09:30:00.000Z"}
	ch.meetings[secondAgency] = []hubspottest.Object{m}
	ch.contacts[secondAgency] = agencyObjects()
	ch.hooks[secondAgency] = []delivery{{kind: "booking.confirmed", bookingID: "b3"}}
}

func agencyObjects() []hubspottest.Object {
	var out []hubspottest.Object
	for i, props := range agencyContacts {
		out = append(out, hubspottest.Object{ID: fmt.Sprintf("a%d", i), Properties: props})
	}
	return out
}

// A caller's move that changes only the agent (same property, same time)
// is worded as staff's reassignment is (desk.reassigned): the viewing
// stands with another agent. The store holds the old booking released
// for it; that answer is true. A move in time stays "rescheduled".
func TestAMoveToAnotherAgentAloneIsAnsweredReassigned(t *testing.T) {
	t.Parallel()
	end := t0.Add(30 * time.Minute)
	ch := &checker{bookings: map[string]stored{
		"k1": {key: "k1", id: "b1", status: string(booking.StatusReleasedForReschedule), property: "flat-1", agent: "agent-1", starts: t0, ends: end},
		"k2": {key: "k2", id: "b2", status: "confirmed", property: "flat-1", agent: "agent-2", starts: t0, ends: end, replaces: "k1"},
	}, final: map[string]*receipt.Receipt{"k1": {RequestKey: "k1", Status: receipt.StatusReassigned, ReplacedBy: "k2"}}}
	require.Empty(t, ch.agreesWithStore())

	moved := ch.bookings["k2"]
	moved.starts, moved.ends = t0.Add(time.Hour), end.Add(time.Hour)
	ch.bookings["k2"] = moved
	require.Len(t, ch.agreesWithStore(), 1, "a move in time answered reassigned")
}
