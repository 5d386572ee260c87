package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func at(hhmm string) time.Time {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func sp(from, to string) booking.Span { return booking.Span{Start: at(from), End: at(to)} }

func TestPeak(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		win    booking.Span
		others []booking.Span
		want   int
		where  booking.Span
	}{
		{"empty", sp("09:00", "10:00"), nil, 0, booking.Span{}},
		{"touching is not overlapping", sp("10:00", "11:00"), []booking.Span{sp("09:00", "10:00"), sp("11:00", "12:00")}, 0, booking.Span{}},
		{"two disjoint overlaps count once", sp("09:30", "10:30"), []booking.Span{sp("09:00", "10:00"), sp("10:00", "11:00")}, 1, sp("09:30", "10:00")},
		{"nested", sp("09:00", "12:00"), []booking.Span{sp("09:00", "12:00"), sp("10:00", "11:00"), sp("10:30", "10:45")}, 3, sp("10:30", "10:45")},
		{"clipped to window", sp("09:45", "10:15"), []booking.Span{sp("09:00", "10:00"), sp("10:00", "11:00"), sp("09:30", "10:30")}, 2, sp("09:45", "10:00")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, where := peak(tc.win, tc.others)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.where, where)
		})
	}
}
