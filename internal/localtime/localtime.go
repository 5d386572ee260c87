// Package localtime turns a wall-clock time in an IANA zone into an instant,
// refusing to guess when daylight-saving time makes the wall clock skip or
// repeat, and renders instants back as the local time a caller hears.
package localtime

import (
	"errors"
	"fmt"
	"time"
)

// Layout is the local date-time form accepted from callers: no offset, since
// the offset is what the zone decides.
const Layout = "2006-01-02T15:04"

// ErrUnknownZone is returned for a zone name the tz database does not know.
var ErrUnknownZone = errors.New("unknown time zone")

// NonexistentError reports a local time that falls in a DST gap: the clock
// jumps over it, so no instant has that reading.
type NonexistentError struct {
	Local string
	Zone  string
	// Earlier and Later are the two readings a caller might have meant: the
	// wall time taken with the offset after the gap (an earlier instant) and
	// with the offset before it (a later one).
	Earlier, Later time.Time
}

func (e *NonexistentError) Error() string {
	return fmt.Sprintf("local time %s does not exist in %s (daylight-saving gap): did you mean %s or %s?",
		e.Local, e.Zone, e.Earlier.Format(time.RFC3339), e.Later.Format(time.RFC3339))
}

// AmbiguousError reports a local time that occurs twice, when the clock is
// set back.
type AmbiguousError struct {
	Local          string
	Zone           string
	Earlier, Later time.Time
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("local time %s occurs twice in %s (daylight-saving overlap): %s or %s?",
		e.Local, e.Zone, e.Earlier.Format(time.RFC3339), e.Later.Format(time.RFC3339))
}

// Parse resolves a local date-time in Layout form within zone.
func Parse(local, zone string) (time.Time, error) {
	loc, err := LoadZone(zone)
	if err != nil {
		return time.Time{}, err
	}
	if len(local) == len(Layout)+3 && local[len(Layout)] == ':' {
		// Seconds, as many clients write them, but a viewing starts on a
		// minute.
		if local[len(Layout):] != ":00" {
			return time.Time{}, fmt.Errorf("local time %q: seconds must be 00", local)
		}
		local = local[:len(Layout)]
	}
	wall, err := time.Parse(Layout, local)
	if err != nil {
		return time.Time{}, fmt.Errorf("local time %q: want form %s", local, Layout)
	}
	return Resolve(wall, loc)
}

// Resolve finds the one instant whose reading in loc is the wall clock of
// wall (its location is ignored). It never picks between two readings, and
// never shifts a reading that does not exist.
func Resolve(wall time.Time, loc *time.Location) (time.Time, error) {
	asUTC := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(),
		wall.Second(), wall.Nanosecond(), time.UTC)
	before, after := offsetsAround(asUTC, loc)
	var found []time.Time
	for _, off := range []int{after, before} {
		t := asUTC.Add(-time.Duration(off) * time.Second).In(loc)
		if sameWall(t, asUTC) && (len(found) == 0 || !found[0].Equal(t)) {
			found = append(found, t)
		}
	}
	local := asUTC.Format(Layout)
	switch len(found) {
	case 1:
		return found[0], nil
	case 2:
		earlier, later := order(found[0], found[1])
		return time.Time{}, &AmbiguousError{Local: local, Zone: loc.String(), Earlier: earlier, Later: later}
	default:
		earlier := asUTC.Add(-time.Duration(after) * time.Second).In(loc)
		later := asUTC.Add(-time.Duration(before) * time.Second).In(loc)
		earlier, later = order(earlier, later)
		return time.Time{}, &NonexistentError{Local: local, Zone: loc.String(), Earlier: earlier, Later: later}
	}
}

// offsetsAround returns the zone's UTC offsets a day and a half either side
// of the wall time. Offsets differ from UTC by at most a day, and zones do
// not change twice within three days, so any transition that could make the
// wall time skip or repeat lies between the two samples.
func offsetsAround(asUTC time.Time, loc *time.Location) (before, after int) {
	const margin = 36 * time.Hour
	_, before = asUTC.Add(-margin).In(loc).Zone()
	_, after = asUTC.Add(margin).In(loc).Zone()
	return before, after
}

func sameWall(t, asUTC time.Time) bool {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return y == asUTC.Year() && mo == asUTC.Month() && d == asUTC.Day() &&
		h == asUTC.Hour() && mi == asUTC.Minute() && s == asUTC.Second()
}

func order(a, b time.Time) (time.Time, time.Time) {
	if b.Before(a) {
		return b, a
	}
	return a, b
}

// Render is how a receipt reads an instant back to a caller: local date,
// time, offset and zone name, e.g. "2026-11-07 10:30 (+01:00, Europe/Paris)".
func Render(t time.Time, loc *time.Location) string {
	lt := t.In(loc)
	return lt.Format("2006-01-02 15:04") + " (" + lt.Format("-07:00") + ", " + loc.String() + ")"
}
