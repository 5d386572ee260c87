package booking

import (
	"fmt"
	"time"
)

// Policy is one version of the booking rules.
type Policy struct {
	Version                    string
	SlotMinutes                int
	DefaultBufferBeforeMinutes int
	DefaultBufferAfterMinutes  int
	// OpensAt and ClosesAt bound bookable hours, as offsets from local
	// midnight in each property's own zone.
	OpensAt, ClosesAt time.Duration
	HoldTTL           time.Duration
	MinNotice         time.Duration
	// HorizonDays is how far ahead a booking may start; 0 is no limit.
	HorizonDays int
	// Reminder is how long before the viewing the caller is reminded; 0 is
	// none. A booking confirmed inside that window gets none (the store
	// sets booking.remind_at, migration 027).
	Reminder time.Duration
}

func (p Policy) Validate() error {
	switch {
	case p.Version == "" || len(p.Version) > 100:
		return Rejectf(CodeInvalidPolicy, "version must be 1 to 100 characters")
	case p.SlotMinutes < 5 || p.SlotMinutes > 1440:
		return Rejectf(CodeInvalidPolicy, "slot_minutes must be 5 to 1440")
	case p.DefaultBufferBeforeMinutes < 0 || p.DefaultBufferBeforeMinutes > 1440 ||
		p.DefaultBufferAfterMinutes < 0 || p.DefaultBufferAfterMinutes > 1440:
		return Rejectf(CodeInvalidPolicy, "buffers must be 0 to 1440 minutes")
	case p.OpensAt < 0 || p.ClosesAt > 24*time.Hour-time.Minute || p.ClosesAt <= p.OpensAt ||
		p.OpensAt%time.Minute != 0 || p.ClosesAt%time.Minute != 0:
		return Rejectf(CodeInvalidPolicy, "bookable hours must be whole minutes with opens before closes within one day")
	case p.HoldTTL < time.Second || p.HoldTTL > 24*time.Hour || p.HoldTTL%time.Second != 0:
		return Rejectf(CodeInvalidPolicy, "hold_ttl must be whole seconds from 1s to 24h")
	case p.MinNotice < 0 || p.MinNotice%time.Minute != 0:
		return Rejectf(CodeInvalidPolicy, "min_notice must be whole minutes, not negative")
	case p.HorizonDays < 0 || p.HorizonDays > 3660:
		return Rejectf(CodeInvalidPolicy, "horizon_days must be 0 (none) to 3660")
	case p.Reminder < 0 || p.Reminder > 7*24*time.Hour || p.Reminder%time.Minute != 0:
		return Rejectf(CodeInvalidPolicy, "reminder_minutes must be whole minutes from 0 (none) to 10080")
	}
	return nil
}

// WithinHours reports whether [start, end) lies within bookable hours on one
// local day in loc.
func (p Policy) WithinHours(start, end time.Time, loc *time.Location) bool {
	h := Wall(start, end, loc)
	return h.SameDay && time.Duration(h.Start)*time.Second >= p.OpensAt && time.Duration(h.End)*time.Second <= p.ClosesAt
}

// WallHours is a span's local start and end as whole seconds since local
// midnight, and whether both fall on the same local day.
type WallHours struct {
	SameDay    bool
	Start, End int
}

func Wall(start, end time.Time, loc *time.Location) WallHours {
	ls, le := start.In(loc), end.In(loc)
	secs := func(t time.Time) int { h, m, s := t.Clock(); return h*3600 + m*60 + s }
	y, m, d := ls.Date()
	ey, em, ed := le.Date()
	return WallHours{SameDay: y == ey && m == em && d == ed, Start: secs(ls), End: secs(le)}
}

func (p Policy) Hours() string { return Clock(p.OpensAt) + "–" + Clock(p.ClosesAt) }

// Clock writes an offset from midnight as a time of day, HH:MM.
func Clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60)
}

// ParseClock reads a time of day, HH:MM, as an offset from midnight.
func ParseClock(s string) (time.Duration, error) {
	m, err := clockMinutes(s)
	return time.Duration(m) * time.Minute, err
}
