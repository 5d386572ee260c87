package mail

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Invite is a viewing as an iCalendar (RFC 5545) invitation, under the
// scheduling methods of iTIP (RFC 5546): a REQUEST the caller's calendar
// adds or updates, or a CANCEL that removes it. One UID stands for the
// viewing across its moves; each change raises Sequence, so a calendar
// takes the latest and ignores one that arrives late.
type Invite struct {
	UID      string
	Sequence int
	Cancel   bool
	// Start and End are instants; Zone, an IANA name, is the zone the
	// times are written in, with its rules (VTIMEZONE) from the build's
	// zone data.
	Start, End time.Time
	Zone       string
	Summary    string
	Details    string
	// Location is where the viewing is (LOCATION); empty leaves it out.
	Location string
	// Organizer and Attendee are addresses: the agency's sender and the
	// caller. OrganizerName is the agency's name (CN); empty leaves it out.
	Organizer, Attendee, OrganizerName string
	// URL is the caller's own page, where they change or cancel the
	// viewing; empty leaves it out.
	URL string
	// Stamp is when the invitation was made (DTSTAMP).
	Stamp time.Time
}

// ICS renders the invitation with CRLF line ends and folded lines.
func (in Invite) ICS() ([]byte, error) {
	loc, err := localtime.LoadZone(in.Zone)
	if err != nil {
		return nil, fmt.Errorf("invite %s: %w", in.UID, err)
	}
	if in.UID == "" || !in.End.After(in.Start) {
		return nil, fmt.Errorf("invite %q: a uid and a start before the end are required", in.UID)
	}
	method, status := "REQUEST", "CONFIRMED"
	if in.Cancel {
		method, status = "CANCEL", "CANCELLED"
	}
	var b strings.Builder
	put := func(line string) { fold(&b, line) }
	put("BEGIN:VCALENDAR")
	put("VERSION:2.0")
	put("PRODID:-//bookingsaga//viewings//EN")
	put("METHOD:" + method)
	vtimezone(put, in.Zone, loc, in.Start)
	put("BEGIN:VEVENT")
	put("UID:" + text(in.UID))
	put(fmt.Sprintf("SEQUENCE:%d", in.Sequence))
	put("DTSTAMP:" + in.Stamp.UTC().Format("20060102T150405Z"))
	put("DTSTART;TZID=" + in.Zone + ":" + in.Start.In(loc).Format("20060102T150405"))
	put("DTEND;TZID=" + in.Zone + ":" + in.End.In(loc).Format("20060102T150405"))
	put("SUMMARY:" + text(in.Summary))
	if in.Location != "" {
		put("LOCATION:" + text(in.Location))
	}
	if in.Details != "" {
		put("DESCRIPTION:" + text(in.Details))
	}
	if in.URL != "" {
		put("URL:" + in.URL)
	}
	put("STATUS:" + status)
	organizer := "ORGANIZER"
	if in.OrganizerName != "" {
		organizer += ";CN=" + param(in.OrganizerName)
	}
	put(organizer + ":mailto:" + in.Organizer)
	put("ATTENDEE;ROLE=REQ-PARTICIPANT;RSVP=FALSE:mailto:" + in.Attendee)
	put("END:VEVENT")
	put("END:VCALENDAR")
	return []byte(b.String()), nil
}

// vtimezone writes the zone's observances in force from a year before
// start to a year after, each as the transition it is (no recurrence
// rules to get wrong), so the event's times read the same in any client.
// The transitions are found by walking the window a day at a time and
// bisecting each change to the second: Go's ZoneBounds stalls where the
// zone data's table gives way to its rule.
func vtimezone(put func(string), name string, loc *time.Location, start time.Time) {
	put("BEGIN:VTIMEZONE")
	put("TZID:" + name)
	t := time.Date(start.Year()-1, 1, 1, 0, 0, 0, 0, loc)
	until := time.Date(start.Year()+2, 1, 1, 0, 0, 0, 0, loc)
	abbr, offset := t.Zone()
	observance(put, t, abbr, offset, offset) // in force when the window opens
	for next := t.Add(24 * time.Hour); t.Before(until); next = t.Add(24 * time.Hour) {
		if _, o := next.Zone(); o == offset {
			t = next
			continue
		}
		lo, hi := t, next // offset at lo, another at hi
		for hi.Sub(lo) > time.Second {
			mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
			if _, o := mid.Zone(); o == offset {
				lo = mid
			} else {
				hi = mid
			}
		}
		a, o := hi.Zone()
		observance(put, hi, a, offset, o)
		t, offset = hi, o
	}
	put("END:VTIMEZONE")
}

// observance writes one transition, at t, from one offset to another.
func observance(put func(string), t time.Time, abbr string, from, to int) {
	kind := "STANDARD"
	if t.IsDST() {
		kind = "DAYLIGHT"
	}
	put("BEGIN:" + kind)
	// DTSTART of an observance is local time in the offset before it.
	put("DTSTART:" + t.In(time.FixedZone("", from)).Format("20060102T150405"))
	put("TZOFFSETFROM:" + utcOffset(from))
	put("TZOFFSETTO:" + utcOffset(to))
	put("TZNAME:" + text(abbr))
	put("END:" + kind)
}

func utcOffset(seconds int) string {
	sign := "+"
	if seconds < 0 {
		sign, seconds = "-", -seconds
	}
	return fmt.Sprintf("%s%02d%02d", sign, seconds/3600, seconds%3600/60)
}

// text escapes a TEXT value (RFC 5545 3.3.11).
func text(s string) string {
	return strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\r\n", `\n`, "\n", `\n`).Replace(s)
}

// fold writes line, folded at 75 octets without splitting a character
// (RFC 5545 3.1), and ends it with CRLF.
func fold(b *strings.Builder, line string) {
	limit := 75
	for len(line) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		b.WriteString(line[:cut])
		b.WriteString("\r\n ")
		line = line[cut:]
		limit = 74 // the leading space counts
	}
	b.WriteString(line)
	b.WriteString("\r\n")
}

// param is a parameter value (RFC 5545 3.2): quoted, without the DQUOTE
// and control characters it may not hold.
func param(v string) string {
	return `"` + strings.Map(func(r rune) rune {
		if r == '"' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, v) + `"`
}
