package chaos

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
)

// hubspotMirrors: on the property whose agency keeps HubSpot, a confirmed
// booking has one meeting, SCHEDULED at its times, on its caller's one
// contact when the caller agreed to be kept on file and on no contact
// otherwise; a booking no longer live has no SCHEDULED meeting; no meeting
// names a booking the store lacks, one of another agency's (in this
// agency's account) or one on the generic CRM.
func (ch *checker) hubspotMirrors() []string {
	var bad []string
	byID := map[string]stored{}
	for _, b := range ch.bookings {
		byID[b.id] = b
	}
	meetings := map[string]hubspottest.Object{}
	for _, account := range slices.Sorted(maps.Keys(ch.meetings)) {
		for _, m := range ch.meetings[account] {
			id := m.Properties["bookingsaga_booking_id"]
			b, ok := byID[id]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("hubspot meeting %s names booking %q, which the store lacks", m.ID, id))
			case b.owner().ID != account:
				bad = append(bad, fmt.Sprintf("%s, %s's booking, has a meeting in %s's HubSpot", b.key, b.owner().ID, account))
			case !b.onHubSpot():
				bad = append(bad, fmt.Sprintf("%s's meeting is in HubSpot, but %s of %s keeps the generic CRM", b.key, b.property, b.owner().ID))
			}
			if _, dup := meetings[id]; dup {
				bad = append(bad, fmt.Sprintf("booking %s has two hubspot meetings", id))
			}
			meetings[id] = m
		}
	}
	for _, b := range ch.bookings {
		if !b.onHubSpot() || b.status == string(booking.StatusHeld) {
			continue
		}
		m, ok := meetings[b.id]
		scheduled := ok && m.Properties["hs_meeting_outcome"] == "SCHEDULED"
		switch confirmed := b.status == string(booking.StatusConfirmed); {
		case confirmed && !scheduled:
			bad = append(bad, fmt.Sprintf("%s is confirmed without a scheduled hubspot meeting", b.key))
		case confirmed && !meetingAt(m, b):
			bad = append(bad, fmt.Sprintf("%s's hubspot meeting starts %s, the booking %s", b.key,
				m.Properties["hs_meeting_start_time"], b.starts.Format(time.RFC3339)))
		case confirmed:
			bad = append(bad, ch.onCallersContact(b, m)...)
		case scheduled:
			bad = append(bad, fmt.Sprintf("%s is %s but its hubspot meeting is scheduled", b.key, b.status))
		}
	}
	return bad
}

// onCallersContact: a confirmed booking's meeting is on its caller's one
// contact (the caller who first booked, for a moved booking) if they
// agreed to be kept on file, else on none.
func (ch *checker) onCallersContact(b stored, m hubspottest.Object) []string {
	origin := ch.origin(b.key)
	if !keptOnFile(origin) {
		if len(m.Contacts) > 0 {
			return []string{fmt.Sprintf("%s's caller was not kept on file, but its meeting is on %d contacts", b.key, len(m.Contacts))}
		}
		return nil
	}
	var theirs []string
	for _, c := range ch.contacts[b.owner().ID] {
		if c.Properties["phone"] == phoneFor(origin) {
			theirs = append(theirs, c.ID)
		}
	}
	switch {
	case len(theirs) != 1:
		return []string{fmt.Sprintf("%s's caller is %d hubspot contacts, want 1", b.key, len(theirs))}
	case len(m.Contacts) != 1 || m.Contacts[0] != theirs[0]:
		return []string{fmt.Sprintf("%s's meeting is on contacts %v, its caller is %s", b.key, m.Contacts, theirs[0])}
	}
	return nil
}

// agencyContacts are contacts the agency kept in HubSpot before the run,
// one of them with the callers' own name.
var agencyContacts = []map[string]string{
	{"email": "office@agency.chaos.test", "firstname": "Front", "lastname": "Desk", "phone": "+33100000000"},
	{"email": "owner@agency.chaos.test", "firstname": "Chaos", "lastname": "Caller", "phone": "+33100000001"},
	{"firstname": "Marie", "lastname": "Martin", "mobilephone": "+33600000000"},
}

// agencysContactsKept: no contact the service did not create is ever
// deleted: each an agency kept before the run is there after it, as it
// was, in its account.
func (ch *checker) agencysContactsKept() []string {
	var bad []string
	for account, contacts := range ch.contacts {
		for _, want := range agencyContacts {
			kept := slices.ContainsFunc(contacts, func(o hubspottest.Object) bool {
				for k, v := range want {
					if o.Properties[k] != v {
						return false
					}
				}
				return true
			})
			if !kept {
				bad = append(bad, fmt.Sprintf("%s's hubspot contact %v is gone or changed", account, want))
			}
		}
	}
	return bad
}

func meetingAt(m hubspottest.Object, b stored) bool {
	s, err1 := time.Parse(time.RFC3339, m.Properties["hs_meeting_start_time"])
	e, err2 := time.Parse(time.RFC3339, m.Properties["hs_meeting_end_time"])
	return err1 == nil && err2 == nil && s.Equal(b.starts) && e.Equal(b.ends)
}
