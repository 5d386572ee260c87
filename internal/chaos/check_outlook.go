package chaos

import (
	"fmt"
	"sort"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
)

// outlookMirrors: in the agents' Microsoft 365 mailboxes, a confirmed
// booking has exactly one event carrying its key, at its times; a booking
// no longer live has none; no event carries a key the store lacks.
func (ch *checker) outlookMirrors() []string {
	var bad []string
	byKey := map[string]int{}
	for mb, evs := range ch.outlook {
		for _, ev := range evs {
			key := keyOf(ev.Properties)
			b, ok := ch.bookings[key]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("event %s in %s belongs to no booking", ev.ID, mb))
				continue
			case mailbox(b.agent) != mb:
				bad = append(bad, fmt.Sprintf("%s's event is in %s, its agent is %s", key, mb, b.agent))
			case !ev.Start.Equal(b.starts) || !ev.End.Equal(b.ends):
				bad = append(bad, fmt.Sprintf("%s's event in %s is at %s, the booking at %s", key, mb, ev.Start, b.starts))
			}
			byKey[key]++
		}
	}
	for key, b := range ch.bookings {
		if _, kept := ch.outlook[mailbox(b.agent)]; !kept || b.status == string(booking.StatusHeld) {
			continue
		}
		switch n, confirmed := byKey[key], b.status == string(booking.StatusConfirmed); {
		case confirmed && n != 1:
			bad = append(bad, fmt.Sprintf("%s is confirmed with %d events in %s", key, n, mailbox(b.agent)))
		case !confirmed && n != 0:
			bad = append(bad, fmt.Sprintf("%s is %s but has %d events in %s", key, b.status, n, mailbox(b.agent)))
		}
	}
	sort.Strings(bad)
	return bad
}

// keyOf is the request key in an event's marker, "" for none.
func keyOf(props map[string]string) string {
	for id, v := range props {
		if id == msgraph.RequestKeyProperty {
			return v
		}
	}
	return ""
}
