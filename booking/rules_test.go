package booking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

func paris(t *testing.T) *time.Location {
	t.Helper()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	return loc
}

func code(t *testing.T, err error) Code {
	t.Helper()
	if err == nil {
		return ""
	}
	r, ok := err.(*Rejection)
	require.True(t, ok, "%v", err)
	return r.Code
}

func TestHoursUpToMidnight(t *testing.T) {
	t.Parallel()
	loc := paris(t)
	r := &Rules{Hours: []WeeklyHours{{Day: "fri", Opens: "20:00", Closes: "24:00"}}}
	require.NoError(t, r.Validate(loc))
	fri := func(h, m int) time.Time { return time.Date(2026, 12, 11, h, m, 0, 0, loc) }
	require.NoError(t, r.Open(fri(23, 30), fri(24, 0), loc, Policy{}, false), "ends at midnight")
	require.Equal(t, CodeOutsideHours, code(t, r.Open(fri(23, 30), fri(24, 30), loc, Policy{}, false)), "runs into Saturday")
	require.Equal(t, CodeOutsideHours, code(t, r.Open(fri(19, 30), fri(20, 30), loc, Policy{}, false)))
}

// A date override applies to a resource without weekly hours; other days
// keep the policy's window (for a property) or no limit (for others).
func TestAnOverrideWithoutWeeklyHours(t *testing.T) {
	t.Parallel()
	loc := paris(t)
	r := &Rules{Overrides: []DateHours{{Date: "2026-12-24", Hours: []OpenRange{{Opens: "10:00", Closes: "12:00"}}}}}
	p := Policy{OpensAt: 8 * time.Hour, ClosesAt: 20 * time.Hour}
	at := func(d, h int) time.Time { return time.Date(2026, 12, d, h, 0, 0, 0, loc) }
	require.Equal(t, CodeOutsideHours, code(t, r.Open(at(24, 14), at(24, 15), loc, p, true)))
	require.NoError(t, r.Open(at(24, 10), at(24, 11), loc, p, true))
	require.NoError(t, r.Open(at(23, 14), at(23, 15), loc, p, true), "another day: the policy's window")
	require.Equal(t, CodeOutsideBookableHours, code(t, r.Open(at(23, 21), at(23, 22), loc, p, true)))
	require.NoError(t, r.Open(at(23, 21), at(23, 22), loc, p, false), "an agent without hours is open")
}

// On the night the clock goes back, 02:45 CEST to 02:15 CET is half an
// hour that covers every wall time from 02:00 to 03:00: hours closing at
// 02:30 do not hold it.
func TestTheRepeatedHourNeedsTheWholeRange(t *testing.T) {
	t.Parallel()
	loc := paris(t)
	start := time.Date(2026, 10, 25, 0, 45, 0, 0, time.UTC) // 02:45 CEST
	end := start.Add(30 * time.Minute)                      // 02:15 CET
	short := &Rules{Hours: []WeeklyHours{{Day: "sun", Opens: "02:00", Closes: "02:30"}}}
	require.Equal(t, CodeOutsideHours, code(t, short.Open(start, end, loc, Policy{}, false)))
	whole := &Rules{Hours: []WeeklyHours{{Day: "sun", Opens: "02:00", Closes: "03:00"}}}
	require.NoError(t, whole.Open(start, end, loc, Policy{}, false))
}

func TestRulesOutOfRangeAreRefused(t *testing.T) {
	t.Parallel()
	loc := paris(t)
	for _, r := range []Rules{{HorizonDays: 200_000}, {MinNoticeMinutes: 1 << 40}, {WeeklyLimit: -1}} {
		require.Equal(t, CodeInvalidLimit, code(t, r.Validate(loc)), "%+v", r)
	}
	require.Equal(t, CodeInvalidHours, code(t, (&Rules{Hours: []WeeklyHours{{Day: "mon", Opens: "9:00", Closes: "10:00"}}}).Validate(loc)))
	require.Equal(t, CodeInvalidHours, code(t, (&Rules{Hours: []WeeklyHours{{Day: "mon", Opens: "09:00", Closes: "24:30"}}}).Validate(loc)))
}
