package chaos

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
)

// mirrors: a confirmed booking has exactly one live event, at its times,
// on its property's calendar and one scheduled record in its agency's CRM
// (the generic one's, or HubSpot's meeting); a booking that is no longer
// live has neither; nothing else is there.
func (ch *checker) mirrors() []string {
	var bad []string
	live := map[string]calendar.Event{}
	for cal, evs := range ch.events {
		for _, ev := range evs {
			if ev.Status == "cancelled" {
				continue
			}
			if _, dup := live[cal+"/"+ev.Id]; dup {
				bad = append(bad, fmt.Sprintf("event %s is live twice", ev.Id))
			}
			live[cal+"/"+ev.Id] = ev
		}
	}
	crmLive := map[string]int{}
	for _, r := range ch.records {
		if r.Status == crm.StatusScheduled {
			crmLive[r.BookingID]++
		}
	}
	expected := map[string]bool{}
	for _, b := range ch.bookings {
		if b.status == string(booking.StatusHeld) {
			continue
		}
		id := calendarOf(b.owner().ID, b.property) + "/" + gcal.EventID(b.scopedKey())
		ev, hasEvent := live[id]
		confirmed := b.status == string(booking.StatusConfirmed)
		switch {
		case confirmed && !hasEvent:
			bad = append(bad, fmt.Sprintf("%s is confirmed without a calendar event", b.key))
		case confirmed && !sameTimes(ev, b):
			bad = append(bad, fmt.Sprintf("%s's event is at %s, the booking at %s", b.key, ev.Start.DateTime, b.starts.Format(time.RFC3339)))
		case !confirmed && hasEvent:
			bad = append(bad, fmt.Sprintf("%s is %s but its event is live", b.key, b.status))
		}
		if b.onHubSpot() {
			expected[id] = true
			continue // its agency's CRM is HubSpot: hubspotMirrors
		}
		switch n := crmLive[b.id]; {
		case confirmed && n != 1:
			bad = append(bad, fmt.Sprintf("%s is confirmed with %d scheduled CRM records", b.key, n))
		case !confirmed && n != 0:
			bad = append(bad, fmt.Sprintf("%s is %s but the CRM has it scheduled", b.key, b.status))
		}
		expected[id] = true
	}
	for id := range live {
		if !expected[id] {
			bad = append(bad, fmt.Sprintf("event %s belongs to no booking", id))
		}
	}
	bad = append(bad, ch.hubspotMirrors()...)
	bad = append(bad, ch.agencysContactsKept()...)
	sort.Strings(bad)
	return bad
}

func sameTimes(ev calendar.Event, b stored) bool {
	if ev.Start == nil || ev.End == nil {
		return false
	}
	s, err1 := time.Parse(time.RFC3339, ev.Start.DateTime)
	e, err2 := time.Parse(time.RFC3339, ev.End.DateTime)
	return err1 == nil && err2 == nil && s.Equal(b.starts) && e.Equal(b.ends)
}

// outlookMirrors: in the agents' Microsoft 365 mailboxes, a confirmed
// booking has exactly one event carrying its key, at its times; a booking
// no longer live has none; no event carries a key the store lacks.
func (ch *checker) outlookMirrors() []string {
	var bad []string
	byKey := map[string]int{}
	for mb, evs := range ch.outlook {
		for _, ev := range evs {
			b, ok := ch.byScopedKey()[keyOf(ev.Properties)]
			key := b.key
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("event %s in %s belongs to no booking", ev.ID, mb))
				continue
			case mailbox(b.owner().ID, b.agent) != mb:
				bad = append(bad, fmt.Sprintf("%s's event is in %s, its agent is %s", key, mb, b.agent))
			case !ev.Start.Equal(b.starts) || !ev.End.Equal(b.ends):
				bad = append(bad, fmt.Sprintf("%s's event in %s is at %s, the booking at %s", key, mb, ev.Start, b.starts))
			}
			byKey[key]++
		}
	}
	for key, b := range ch.bookings {
		mb := mailbox(b.owner().ID, b.agent)
		if _, kept := ch.outlook[mb]; !kept || b.status == string(booking.StatusHeld) {
			continue
		}
		switch n, confirmed := byKey[key], b.status == string(booking.StatusConfirmed); {
		case confirmed && n != 1:
			bad = append(bad, fmt.Sprintf("%s is confirmed with %d events in %s", key, n, mb))
		case !confirmed && n != 0:
			bad = append(bad, fmt.Sprintf("%s is %s but has %d events in %s", key, b.status, n, mb))
		}
	}
	sort.Strings(bad)
	return bad
}

// keyOf is the request key in an event's marker, "" for none.
func keyOf(props map[string]string) string { return props[msgraph.RequestKeyProperty] }

// callsOn sums up the calls that named key, for a violation's reader.
func (ch *checker) callsOn(key string) string {
	var out []string
	for _, c := range ch.calls {
		if c.Key != key && c.NewKey != key {
			continue
		}
		what := fmt.Sprintf("%s at %s: %d", c.Op, c.Start.Format("15:04:05.0"), c.HTTP)
		if c.NewKey == key {
			what += " as the new key"
		}
		if c.Receipt != nil {
			what += " " + string(c.Receipt.Status)
			if c.Receipt.Reason != nil {
				what += "/" + c.Receipt.Reason.Code
			}
		}
		if c.Err != "" {
			what += " " + c.Err
		}
		out = append(out, what)
	}
	return strings.Join(out, "; ")
}

// writeViolations writes every violation, each with the calls on its key,
// to path: the report prints five of each.
func (ch *checker) writeViolations(path string, invs []Invariant) error {
	var b strings.Builder
	for _, inv := range invs {
		for _, v := range inv.Violations {
			fmt.Fprintf(&b, "%s: %s\n", inv.Name, v)
			if f := strings.Fields(v); len(f) > 0 {
				fmt.Fprintf(&b, "    calls: %s\n", ch.callsOn(f[0]))
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write violations: %w", err)
	}
	return nil
}
