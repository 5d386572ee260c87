package chaos

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
)

// agenciesApart: every booking a call's key made or moved is a row of the
// call's agency, and no other agency's; an event or a meeting of one
// agency's booking is in no other's calendar (the mirrors' checks find
// those: each looks for an agency's booking in that agency's calendars
// alone, and names an event there of no booking of it).
func (ch *checker) agenciesApart() []string {
	var bad []string
	seen := map[string]bool{}
	for _, c := range ch.calls {
		want := cmp.Or(c.Agency, agency.Default.ID)
		for _, k := range []string{c.Key, c.NewKey} {
			b, ok := ch.bookings[k]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			if got := b.owner().ID; got != want {
				bad = append(bad, fmt.Sprintf("%s was asked for by %s's key and is %s's booking", k, want, got))
			}
		}
	}
	for mb, evs := range ch.outlook {
		for _, ev := range evs {
			key := keyOf(ev.Properties)
			if b, ok := ch.byScopedKey()[key]; ok && !strings.HasSuffix(mb, "@"+domain(b.owner().ID)) {
				bad = append(bad, fmt.Sprintf("%s, %s's booking, has an event in %s", b.key, b.owner().ID, mb))
			}
		}
	}
	bad = append(bad, ch.strays...)
	bad = append(bad, ch.webhooksApart()...)
	sort.Strings(bad)
	return bad
}

// readAccounts reads each agency's accounts: its calendars' events and
// its HubSpot's meetings and contacts in its own fakes, the generic
// CRM's records (the default agency's alone keeps one), and the strays.
func (ch *checker) readAccounts(c *cluster) {
	ch.events, ch.outlook = map[string][]calendar.Event{}, map[string][]graphtest.GraphEvent{}
	ch.meetings, ch.contacts = map[string][]hubspottest.Object{}, map[string][]hubspottest.Object{}
	ch.hooks = map[string][]delivery{}
	ch.records = c.crm.Records()
	for _, a := range c.agencies {
		f := c.accountsOf(a)
		ch.meetings[a], ch.contacts[a], ch.hooks[a] = f.hubspot.Meetings(), f.hubspot.Contacts(), f.hooks.deliveries()
		for _, r := range resources(a) {
			switch r.Provider() {
			case booking.ProviderGoogle:
				ch.events[r.CalendarID] = f.calendar.Events(r.CalendarID)
			case booking.ProviderMicrosoft:
				ch.outlook[r.CalendarID] = f.graph.Events(r.CalendarID)
			}
		}
	}
	ch.strays = c.strays()
}

// strays are the events of one agency's calendars found in another
// agency's calendar accounts, and the generic CRM's records of an agency
// that keeps none: what would be there had the deployment's accounts
// served an agency with accounts of its own.
func (c *cluster) strays() []string {
	var bad []string
	for _, a := range c.agencies {
		f := c.accountsOf(a)
		for _, other := range c.agencies {
			if c.accountsOf(other) == f {
				continue
			}
			for _, r := range resources(other) {
				n := len(f.calendar.Events(r.CalendarID)) + len(f.graph.Events(r.CalendarID))
				if n > 0 {
					bad = append(bad, fmt.Sprintf("%s's calendar %s has %d events in %s's account", other, r.CalendarID, n, a))
				}
			}
		}
	}
	return bad
}

// confirmedByAgency counts each agency's confirmed bookings.
func (ch *checker) confirmedByAgency() map[string]int {
	out := map[string]int{}
	for _, b := range ch.bookings {
		if b.status == string(booking.StatusConfirmed) {
			out[b.owner().ID]++
		}
	}
	return out
}

// byScopedKey is the bookings by the key their mirrors carry.
func (ch *checker) byScopedKey() map[string]stored {
	if ch.scoped == nil {
		ch.scoped = make(map[string]stored, len(ch.bookings))
		for _, b := range ch.bookings {
			ch.scoped[b.scopedKey()] = b
		}
	}
	return ch.scoped
}

// owner is the agency whose booking b is.
func (b stored) owner() agency.Agency {
	if b.agency.No == 0 {
		return agency.Default
	}
	return b.agency
}

// scopedKey is b's key as its mirrors carry it: in its agency's space.
func (b stored) scopedKey() string { return agency.WorkflowID(b.owner(), b.key) }

// onHubSpot reports whether b's agency keeps HubSpot for b's property:
// the second agency for all of them, as HubSpot is its only CRM.
func (b stored) onHubSpot() bool { return !b.owner().IsDefault() || b.property == hubspotProperty }

// countAll is how many objects every agency's account holds.
func countAll(by map[string][]hubspottest.Object) int {
	n := 0
	for _, objs := range by {
		n += len(objs)
	}
	return n
}
