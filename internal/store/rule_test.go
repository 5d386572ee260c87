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

// Staff reassign a viewing this morning because its agent fell ill: the
// notice that keeps callers from booking too late does not stop moving
// it to a free agent at the same time, but the commit's rules for the
// new agent still hold; a move to another time inside the notice is
// still too late, and so is any change once the viewing has started.
func TestAReassignmentInsideTheNoticeIsAllowed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "ill", intent("paris", agent(0), "10:00", "10:30"))
	f.clock.Advance(paris("09:45").Sub(testNow)) // a quarter of an hour before, inside the hour's notice

	later := moving("ill", intent("paris", agent(0), "10:30", "11:00"))
	_, err := f.store.Commit(f.ctx, commitReq("ill-later", later))
	requireCode(t, err, booking.CodeTooShortNotice)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: agent(2), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris",
		Rules: &booking.Rules{TimeOff: []booking.Span{{Start: paris("08:00"), End: paris("12:00")}}}}))
	_, err = f.store.Commit(f.ctx, commitReq("ill-to-2", moving("ill", intent("paris", agent(2), "10:00", "10:30"))))
	requireCode(t, err, booking.CodeTimeOff)

	out := f.booked(t, "ill-to-1", moving("ill", intent("paris", agent(1), "10:00", "10:30")))
	require.Equal(t, booking.StatusConfirmed, out.Booking.Status)
	old, err := f.store.Lookup(f.ctx, "ill")
	require.NoError(t, err)
	require.Equal(t, booking.StatusReleasedForReschedule, old.Status)

	f.clock.Advance(time.Hour) // the viewing under way
	_, err = f.store.Commit(f.ctx, commitReq("ill-to-3", moving("ill-to-1", intent("paris", agent(3), "10:00", "10:30"))))
	requireCode(t, err, booking.CodeStartsInPast)
}
