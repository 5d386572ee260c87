package callerpage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The form shows the days ahead, not one day's every half hour: each
// day's first, middle and last free start, days split in the booking's
// zone (23:30 UTC is the next day in Paris).
func TestTheFormSpreadsTheFreeTimesOverTheDays(t *testing.T) {
	t.Parallel()
	var slots []booking.Slot
	for day := range 7 {
		for half := range 10 {
			at := time.Date(2026, 12, 8+day, 7, 0, 0, 0, time.UTC).Add(time.Duration(half) * 30 * time.Minute)
			slots = append(slots, booking.Slot{StartsAt: at})
		}
	}
	late := booking.Slot{StartsAt: time.Date(2026, 12, 7, 23, 30, 0, 0, time.UTC)} // 00:30 on the 8th in Paris
	got := spread(append([]booking.Slot{late}, slots...), "Europe/Paris")
	require.Len(t, got, maxOffered)
	require.Equal(t, late.StartsAt, got[0].StartsAt, "the 8th's first, in Paris")
	require.Equal(t, slots[4].StartsAt, got[1].StartsAt, "its middle")
	require.Equal(t, slots[9].StartsAt, got[2].StartsAt, "its last")
	require.Equal(t, slots[10].StartsAt, got[3].StartsAt, "then the 9th's first")
	require.Equal(t, slots[49].StartsAt, got[14].StartsAt, "five days of three: the 12th's last")
	require.Len(t, spread(slots[:2], "Europe/Paris"), 2, "a day of two keeps both")
}
