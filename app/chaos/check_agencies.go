package chaos

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
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
	sort.Strings(bad)
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

// onHubSpot reports whether b's agency keeps HubSpot for b's property.
func (b stored) onHubSpot() bool { return b.owner().IsDefault() && b.property == hubspotProperty }
