package booking

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Rules are a resource's own booking rules beside the policy's: its
// working hours, dates with other hours, time off, notice, horizon and
// limits. The commit and availability apply them through the same
// functions (Open, Notice, the limit counts), in the resource's own zone.
type Rules struct {
	// Hours is the weekly schedule; none means the policy's daily window.
	Hours []WeeklyHours `json:"hours,omitempty"`
	// Overrides replace the weekly schedule on their dates: closed, or
	// other hours.
	Overrides []DateHours `json:"overrides,omitempty"`
	// TimeOff are ranges in which the resource takes no booking.
	TimeOff []Span `json:"time_off,omitempty"`
	// MinNoticeMinutes and HorizonDays tighten the policy's notice and
	// horizon for bookings that use this resource.
	MinNoticeMinutes int `json:"min_notice_minutes,omitempty"`
	HorizonDays      int `json:"horizon_days,omitempty"`
	// DailyLimit and WeeklyLimit cap the live bookings (confirmed, or held
	// and not expired) on one local day, or one ISO week, of the
	// resource; 0 is no limit.
	DailyLimit  int `json:"daily_limit,omitempty"`
	WeeklyLimit int `json:"weekly_limit,omitempty"`
}

// WeeklyHours is one opening range on a day of the week.
type WeeklyHours struct {
	Day    string `json:"day"` // mon, tue, wed, thu, fri, sat, sun
	Opens  string `json:"opens"`
	Closes string `json:"closes"` // HH:MM, after Opens, on the same day
}

// DateHours is a date with hours of its own: Closed, or Hours in place of
// the week's.
type DateHours struct {
	Date   string      `json:"date"` // YYYY-MM-DD, local to the resource
	Closed bool        `json:"closed,omitempty"`
	Hours  []OpenRange `json:"hours,omitempty"`
}

// OpenRange is an opening range on a date.
type OpenRange struct {
	Opens  string `json:"opens"`
	Closes string `json:"closes"`
}

// Limits of what one resource's rules may hold, so that a rule set stays
// a small document read under the commit's lock.
const (
	maxRanges  = 64
	maxTimeOff = 200
	maxDays    = 3660
)

var weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Empty reports whether r adds nothing to the policy.
func (r *Rules) Empty() bool {
	return r == nil || len(r.Hours) == 0 && len(r.Overrides) == 0 && len(r.TimeOff) == 0 &&
		r.MinNoticeMinutes == 0 && r.HorizonDays == 0 && r.DailyLimit == 0 && r.WeeklyLimit == 0
}

// Validate refuses a rule set that cannot mean one thing, each mistake
// with its own code, in the resource's zone loc.
func (r *Rules) Validate(loc *time.Location) error {
	if r == nil {
		return nil
	}
	switch {
	case r.DailyLimit < 0 || r.WeeklyLimit < 0:
		return Rejectf(CodeInvalidLimit, "daily_limit and weekly_limit must not be negative")
	case r.MinNoticeMinutes < 0 || r.HorizonDays < 0 || r.MinNoticeMinutes > maxDays*24*60 || r.HorizonDays > maxDays:
		return Rejectf(CodeInvalidLimit, "min_notice_minutes and horizon_days must be 0 to %d days", maxDays)
	case len(r.Hours) > maxRanges || len(r.Overrides) > maxRanges || len(r.TimeOff) > maxTimeOff:
		return Rejectf(CodeInvalidHours, "at most %d weekly ranges, %d overrides and %d time-off ranges", maxRanges, maxRanges, maxTimeOff)
	}
	byDay := map[string][]OpenRange{}
	for _, h := range r.Hours {
		if !slices.Contains(weekdays, h.Day) {
			return Rejectf(CodeInvalidHours, "day %q is not one of %s", h.Day, strings.Join(weekdays, ", "))
		}
		byDay[h.Day] = append(byDay[h.Day], OpenRange{h.Opens, h.Closes})
	}
	for _, day := range weekdays {
		if err := validRanges(day, byDay[day]); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, o := range r.Overrides {
		if err := o.validate(loc); err != nil {
			return err
		}
		if seen[o.Date] {
			return Rejectf(CodeInvalidOverride, "date %s has two overrides", o.Date)
		}
		seen[o.Date] = true
	}
	for _, t := range r.TimeOff {
		if !t.End.After(t.Start) {
			return Rejectf(CodeInvalidHours, "time off from %s must end after it starts", t.Start.Format(time.RFC3339))
		}
	}
	return nil
}

func (o DateHours) validate(loc *time.Location) error {
	day, err := time.ParseInLocation(time.DateOnly, o.Date, time.UTC)
	switch {
	case err != nil:
		return Rejectf(CodeInvalidOverride, "date %q is not a YYYY-MM-DD date", o.Date)
	case o.Closed && len(o.Hours) > 0:
		return Rejectf(CodeInvalidOverride, "date %s is closed and has hours: say one", o.Date)
	case !o.Closed && len(o.Hours) == 0:
		return Rejectf(CodeInvalidOverride, "date %s needs closed or hours", o.Date)
	}
	if err := validRanges(o.Date, o.Hours); err != nil {
		return err
	}
	// An opening or closing time the clock skips that day cannot be met
	// or stated: ask rather than guess.
	for _, h := range o.Hours {
		for _, at := range []string{h.Opens, h.Closes} {
			mins, _ := clockMinutes(at)
			if _, err := localtime.Resolve(day.Add(time.Duration(mins)*time.Minute), loc); err != nil && mins < 24*60 {
				return Rejectf(CodeInvalidOverride, "on %s, %s: %v", o.Date, at, err)
			}
		}
	}
	return nil
}

// validRanges refuses malformed, inverted or overlapping ranges of one day.
func validRanges(day string, rs []OpenRange) error {
	type span struct{ from, to int }
	spans := make([]span, 0, len(rs))
	for _, h := range rs {
		from, err1 := clockMinutes(h.Opens)
		to, err2 := clockMinutes(h.Closes)
		switch {
		case err1 != nil || err2 != nil:
			return Rejectf(CodeInvalidHours, "%s: hours must be HH:MM from 00:00 to 24:00, got %q–%q", day, h.Opens, h.Closes)
		case to <= from:
			return Rejectf(CodeInvalidHours, "%s: %s–%s closes before it opens", day, h.Opens, h.Closes)
		}
		spans = append(spans, span{from, to})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			return Rejectf(CodeInvalidHours, "%s: ranges overlap", day)
		}
	}
	return nil
}

// clockMinutes reads HH:MM (24:00 is the end of the day).
func clockMinutes(s string) (int, error) {
	var h, m int
	if n, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil || n != 2 || len(s) != 5 || h < 0 || m < 0 || m > 59 || h > 24 || h == 24 && m != 0 {
		return 0, fmt.Errorf("bad clock time %q", s)
	}
	return h*60 + m, nil
}

// Open reports why [start, end) is not bookable on this resource by its
// hours in loc, or nil: it must lie within one opening range of one local
// day (an override's, else the week's), and clear of time off. A resource
// without hours of its own is open when window is false, and within the
// policy's daily window when it is true (a property: the policy's window
// is the default of the place visited).
func (r *Rules) Open(start, end time.Time, loc *time.Location, p Policy, window bool) error {
	if r.Empty() || len(r.Hours) == 0 && r.override(start, loc) == nil {
		if window && !p.WithinHours(start, end, loc) {
			return Rejectf(CodeOutsideBookableHours, "%s to %s is outside bookable hours %s in %s",
				localtime.Render(start, loc), localtime.Render(end, loc), p.Hours(), loc)
		}
		return r.clearOfTimeOff(start, end)
	}
	ranges, why := r.ranges(start, loc)
	from, to, oneDay := daySeconds(start, end, loc)
	// On the night the clock is set back, a booking over the repeated
	// hour can end at an earlier wall time than it starts: it then takes
	// every wall time between the two, and the range must hold them all.
	lo, hi := min(from, to), max(from, to)
	inside := false
	for _, h := range ranges {
		opens, _ := clockMinutes(h.Opens)
		closes, _ := clockMinutes(h.Closes)
		inside = inside || oneDay && lo >= opens*60 && hi <= closes*60
	}
	if !inside {
		return Rejectf(CodeOutsideHours, "%s to %s is outside the hours of this resource %s", localtime.Render(start, loc),
			localtime.Render(end, loc), why)
	}
	return r.clearOfTimeOff(start, end)
}

// Openings are the opening ranges of a local date (YYYY-MM-DD, weekday
// wd) as minutes from midnight, and whether they are the resource's own:
// false means it has no hours of its own that day, and the policy's
// window (for a property) decides.
func (r *Rules) Openings(date string, wd time.Weekday) (ranges [][2]int, own bool) {
	if r.Empty() {
		return nil, false
	}
	var rs []OpenRange
	switch o := r.overrideOn(date); {
	case o != nil:
		rs = o.Hours
	case len(r.Hours) == 0:
		return nil, false
	default:
		for _, h := range r.Hours {
			if h.Day == weekdays[wd] {
				rs = append(rs, OpenRange{h.Opens, h.Closes})
			}
		}
	}
	for _, h := range rs {
		from, _ := clockMinutes(h.Opens)
		to, _ := clockMinutes(h.Closes)
		ranges = append(ranges, [2]int{from, to})
	}
	return ranges, true
}

// daySeconds is [start, end) as seconds since start's local midnight, and
// whether it ends that day (at midnight at the latest).
func daySeconds(start, end time.Time, loc *time.Location) (from, to int, oneDay bool) {
	w := Wall(start, end, loc)
	if w.SameDay {
		return w.Start, w.End, true
	}
	midnight := end.In(loc)
	return w.Start, 24 * 3600, w.End == 0 && midnight.AddDate(0, 0, -1).Day() == start.In(loc).Day() && end.Sub(start) < 24*time.Hour
}

// ranges are the opening ranges of start's local day, and how to say them.
func (r *Rules) ranges(start time.Time, loc *time.Location) ([]OpenRange, string) {
	if o := r.override(start, loc); o != nil {
		if o.Closed {
			return nil, "(closed on " + o.Date + ")"
		}
		return o.Hours, "on " + o.Date + " (" + rangesText(o.Hours) + ")"
	}
	day := weekdays[start.In(loc).Weekday()]
	var out []OpenRange
	for _, h := range r.Hours {
		if h.Day == day {
			out = append(out, OpenRange{h.Opens, h.Closes})
		}
	}
	if len(out) == 0 {
		return nil, "(closed on " + day + ")"
	}
	return out, "on " + day + " (" + rangesText(out) + ")"
}

func rangesText(rs []OpenRange) string {
	parts := make([]string, 0, len(rs))
	for _, h := range rs {
		parts = append(parts, h.Opens+"–"+h.Closes)
	}
	return strings.Join(parts, ", ")
}

func (r *Rules) override(start time.Time, loc *time.Location) *DateHours {
	return r.overrideOn(start.In(loc).Format(time.DateOnly))
}

func (r *Rules) overrideOn(date string) *DateHours {
	if r == nil {
		return nil
	}
	for i := range r.Overrides {
		if r.Overrides[i].Date == date {
			return &r.Overrides[i]
		}
	}
	return nil
}

func (r *Rules) clearOfTimeOff(start, end time.Time) error {
	if r == nil {
		return nil
	}
	for _, t := range r.TimeOff {
		if t.Start.Before(end) && t.End.After(start) {
			return Rejectf(CodeTimeOff, "the resource is off from %s to %s", t.Start.UTC().Format(time.RFC3339), t.End.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// Notice reports why start is too soon or too far ahead for this resource
// and the policy at now, or nil.
func (r *Rules) Notice(start time.Time, p Policy, now time.Time) error {
	notice, horizon := p.MinNotice, time.Duration(p.HorizonDays)*24*time.Hour
	if r != nil {
		notice = max(notice, time.Duration(r.MinNoticeMinutes)*time.Minute)
		if r.HorizonDays > 0 && (horizon == 0 || time.Duration(r.HorizonDays)*24*time.Hour < horizon) {
			horizon = time.Duration(r.HorizonDays) * 24 * time.Hour
		}
	}
	switch {
	case start.Before(now):
		return Rejectf(CodeStartsInPast, "starts_at %s is in the past", start.Format(time.RFC3339))
	case start.Before(now.Add(notice)):
		return Rejectf(CodeTooShortNotice, "bookings need %s notice", notice)
	case horizon > 0 && start.After(now.Add(horizon)):
		return Rejectf(CodeBeyondHorizon, "bookings open at most %d days ahead", int(horizon.Hours()/24))
	}
	return nil
}

// Limit reports why one more booking starting at start would exceed the
// resource's daily or weekly limit, given the starts of its live bookings
// (any window that covers start's ISO week), or nil.
func (r *Rules) Limit(id string, start time.Time, loc *time.Location, starts []time.Time) error {
	if r == nil || r.DailyLimit == 0 && r.WeeklyLimit == 0 {
		return nil
	}
	day, week := 0, 0
	for _, s := range starts {
		if SameLocalDay(s, start, loc) {
			day++
		}
		if sameISOWeek(s, start, loc) {
			week++
		}
	}
	switch {
	case r.DailyLimit > 0 && day >= r.DailyLimit:
		return Rejectf(CodeLimitReached, "%s takes at most %d bookings a day", id, r.DailyLimit)
	case r.WeeklyLimit > 0 && week >= r.WeeklyLimit:
		return Rejectf(CodeLimitReached, "%s takes at most %d bookings a week", id, r.WeeklyLimit)
	}
	return nil
}

// SameLocalDay reports whether a and b fall on one calendar day in loc.
func SameLocalDay(a, b time.Time, loc *time.Location) bool {
	ay, am, ad := a.In(loc).Date()
	by, bm, bd := b.In(loc).Date()
	return ay == by && am == bm && ad == bd
}

func sameISOWeek(a, b time.Time, loc *time.Location) bool {
	ay, aw := a.In(loc).ISOWeek()
	by, bw := b.In(loc).ISOWeek()
	return ay == by && aw == bw
}
