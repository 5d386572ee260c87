// Package calendartest is the contract every calendar provider's adapter
// keeps, in the manner of river's driver test suite: the same cases, in one
// place, run by each adapter's tests against the adapter on its fake
// (gcal on gcaltest, msgraph on graphtest). What only one provider does
// (Google's tombstones, Graph's transactionId) stays in that adapter's
// own tests.
package calendartest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Fake is an adapter on its fake, as the suite drives it.
type Fake struct {
	// Mirror is the adapter, pointed at the fake.
	Mirror calendars.Provider
	// Calendar is one the fake holds.
	Calendar calendars.Ref
	// CreateOp and DeleteOp are the fake's names for those operations.
	CreateOp, DeleteOp string
	Inject             func(fakeserver.Fault) error
	Calls              func(op string) int
	// Type puts an event in the calendar as a person would.
	Type func(summary string, start, end time.Time)
	// Erase deletes an event as a person would.
	Erase func(id string)
	// Live is the calendar's live events as the fake holds them (their
	// ID, Summary, Start and End).
	Live func() []calendars.Event
}

// day is the suite's day: the bookings it makes start at 09:00 UTC.
var day = time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)

func booking(f Fake, key string) calendars.Booking {
	start := day.Add(9 * time.Hour)
	return calendars.Booking{Calendar: f.Calendar, BookingID: "b-" + key, RequestKey: key, PropertyRef: "paris-11",
		Reference: "BS-1234", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}
}

// Run runs the contract; setup makes a fresh Fake for each case.
func Run(t *testing.T, setup func(t *testing.T) Fake) {
	cases := map[string]func(*testing.T, Fake){
		"a reply dropped after the save gives one event": func(t *testing.T, f Fake) { lostReply(t, f, false) },
		"a reply held after the save gives one event":    func(t *testing.T, f Fake) { lostReply(t, f, true) },
		"an upsert again changes nothing":                upsertAgain,
		"deletes are idempotent":                         deletes,
		"a hand-deleted event is written again":          handDeleted,
		"hand-typed events are busy and not ours":        handTyped,
		"concurrent upserts leave one event":             concurrent,
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c(t, setup(t))
		})
	}
}

func lostReply(t *testing.T, f Fake, hold bool) {
	require.NoError(t, f.Inject(fakeserver.Fault{Op: f.CreateOp, Times: 1, DropAfterSave: !hold, TimeoutAfterSave: hold}))
	b := booking(f, "lost-reply")
	got, err := f.Mirror.Upsert(context.Background(), b)
	require.NoError(t, err)
	live := f.Live()
	require.Len(t, live, 1, "one event, not a duplicate (hold %v)", hold)
	require.Equal(t, got.EventID, live[0].ID)
	require.Equal(t, 2, f.Calls(f.CreateOp), "the create was sent again")

	again, err := f.Mirror.Upsert(context.Background(), b)
	require.NoError(t, err)
	require.Equal(t, got.EventID, again.EventID, "a later retry of the step finds it")
	require.Len(t, f.Live(), 1)
}

func upsertAgain(t *testing.T, f Fake) {
	b := booking(f, "twice")
	first, err := f.Mirror.Upsert(context.Background(), b)
	require.NoError(t, err)
	second, err := f.Mirror.Upsert(context.Background(), b)
	require.NoError(t, err)
	require.Equal(t, first, second, "the same event, unchanged")
	require.Len(t, f.Live(), 1)
}

func deletes(t *testing.T, f Fake) {
	ctx := context.Background()
	b := booking(f, "gone")
	require.NoError(t, f.Mirror.Delete(ctx, f.Calendar.ID, b.RequestKey, b.BookingID), "nothing to delete is done")
	_, err := f.Mirror.Upsert(ctx, b)
	require.NoError(t, err)
	require.NoError(t, f.Inject(fakeserver.Fault{Op: f.DeleteOp, Times: 1, DropAfterSave: true}))
	require.NoError(t, f.Mirror.Delete(ctx, f.Calendar.ID, b.RequestKey, b.BookingID), "a lost reply, then gone, is done")
	require.Empty(t, f.Live())
	require.NoError(t, f.Mirror.Delete(ctx, f.Calendar.ID, b.RequestKey, b.BookingID))
}

func handDeleted(t *testing.T, f Fake) {
	ctx := context.Background()
	b := booking(f, "deleted")
	first, err := f.Mirror.Upsert(ctx, b)
	require.NoError(t, err)
	f.Erase(first.EventID)
	got, err := f.Mirror.Lookup(ctx, f.Calendar.ID, b.RequestKey)
	require.NoError(t, err)
	require.True(t, got == nil || got.Status == "cancelled", "a deleted event is none, or a tombstone: %+v", got)
	again, err := f.Mirror.Upsert(ctx, b)
	require.NoError(t, err)
	got, err = f.Mirror.Lookup(ctx, f.Calendar.ID, b.RequestKey)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.True(t, got.Ours)
	require.Equal(t, again.EventID, got.ID)
	require.Equal(t, b.BookingID, got.BookingID)
	require.Len(t, f.Live(), 1)
}

func handTyped(t *testing.T, f Fake) {
	ctx := context.Background()
	b := booking(f, "ours")
	ours, err := f.Mirror.Upsert(ctx, b)
	require.NoError(t, err)
	noon := day.Add(12 * time.Hour)
	f.Type("Dentist", noon, noon.Add(time.Hour))

	busy, err := f.Mirror.FreeBusy(ctx, []string{f.Calendar.ID}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []calendars.Interval{{Start: b.StartsAt, End: b.EndsAt}, {Start: noon, End: noon.Add(time.Hour)}}, busy[f.Calendar.ID])

	evs, err := f.Mirror.Events(ctx, f.Calendar.ID, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Len(t, evs, 2)
	byOurs := map[bool]calendars.Event{evs[0].Ours: evs[0], evs[1].Ours: evs[1]}
	require.Len(t, byOurs, 2, "one ours, one not")
	mine := byOurs[true]
	require.Equal(t, ours.EventID, mine.ID)
	require.Equal(t, b.RequestKey, mine.RequestKey)
	require.Equal(t, b.BookingID, mine.BookingID)
	require.True(t, mine.Start.Equal(b.StartsAt) && mine.End.Equal(b.EndsAt), "instants kept: %s–%s", mine.Start, mine.End)
	require.True(t, byOurs[false].Start.Equal(noon))

	require.NoError(t, f.Mirror.Delete(ctx, f.Calendar.ID, b.RequestKey, b.BookingID))
	live := f.Live()
	require.Len(t, live, 1, "deleting ours leaves theirs")
	require.Equal(t, "Dentist", live[0].Summary)
}

func concurrent(t *testing.T, f Fake) {
	b := booking(f, "racing")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = f.Mirror.Upsert(context.Background(), b) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, f.Live(), 1)
}
