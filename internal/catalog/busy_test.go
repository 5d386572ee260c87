package catalog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

func TestForeignLeavesWhatOurBookingsDoNotExplain(t *testing.T) {
	t.Parallel()
	at := func(h, m int) time.Time { return time.Date(2026, 12, 8, h, m, 0, 0, time.UTC) }
	busy := []calendars.Interval{{Start: at(9, 0), End: at(11, 0)}, {Start: at(12, 0), End: at(12, 30)}}
	ours := []booking.Span{{Start: at(9, 30), End: at(10, 0)}, {Start: at(12, 0), End: at(12, 30)}}
	require.Equal(t, []calendars.Interval{{Start: at(9, 0), End: at(9, 30)}, {Start: at(10, 0), End: at(11, 0)}}, foreign(busy, ours))
	require.Equal(t, busy, foreign(busy, nil))
	require.Empty(t, foreign(busy, []booking.Span{{Start: at(8, 0), End: at(13, 0)}}))
}
