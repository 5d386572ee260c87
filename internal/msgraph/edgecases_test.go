package msgraph_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
)

// Graph compares an extended property's value without case; request keys
// are case-sensitive, so two keys that differ only in case are two
// bookings, each with its own event.
func TestKeysThatDifferOnlyInCaseAreTwoBookings(t *testing.T) {
	t.Parallel()
	f := setup(t)
	upper, lower := viewing("Key-A"), viewing("key-a")
	lower.StartsAt, lower.EndsAt = upper.StartsAt.Add(time.Hour), upper.EndsAt.Add(time.Hour)
	a, err := f.mirror.Upsert(f.ctx, upper)
	require.NoError(t, err)
	b, err := f.mirror.Upsert(f.ctx, lower)
	require.NoError(t, err, "not taken for the other booking's event")
	require.NotEqual(t, a.EventID, b.EventID)
	got, err := f.mirror.Lookup(f.ctx, mailbox, lower.RequestKey)
	require.NoError(t, err)
	require.Equal(t, b.EventID, got.ID)
	require.NoError(t, f.mirror.Delete(f.ctx, mailbox, upper.RequestKey, upper.BookingID))
	evs := f.fake.Events(mailbox)
	require.Len(t, evs, 1)
	require.Equal(t, b.EventID, evs[0].ID, "only its own event is deleted")
}

// A token Graph stops accepting (revoked, or expired early) is dropped
// and a new one asked for, once.
func TestARevokedTokenIsReplaced(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.mirror.Upsert(f.ctx, viewing("before"))
	require.NoError(t, err)
	tokens := f.fake.Calls("token")
	f.fake.RevokeTokens()
	_, err = f.mirror.Upsert(f.ctx, viewing("after"))
	require.NoError(t, err)
	require.Equal(t, tokens+1, f.fake.Calls("token"))
	require.Len(t, f.fake.Events(mailbox), 2)
}

// Copies of our event (an import, a restore) are all removed by a cancel.
func TestADeleteRemovesEveryCopyOfOurs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.upserted(t, "copies")
	twin := f.fake.Events(mailbox)[0]
	twin.ID = ""
	f.fake.Put(mailbox, twin)
	require.Len(t, f.fake.Events(mailbox), 2)
	require.NoError(t, f.mirror.Delete(f.ctx, mailbox, b.RequestKey, b.BookingID))
	require.Empty(t, f.fake.Events(mailbox))
}

// getSchedule names each schedule by its SMTP address, whatever the
// resource was configured with (a user principal name, an alias).
func TestFreeBusyMatchesAnAliasToItsMailbox(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fake.AddMailbox("Room.Two@agency.example", "room2@agency.onmicrosoft.com")
	day := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	f.fake.Put("Room.Two@agency.example", graphtest.GraphEvent{Subject: "Busy", Start: day.Add(9 * time.Hour), End: day.Add(10 * time.Hour)})
	busy, err := f.mirror.FreeBusy(f.ctx, []string{mailbox, "room2@agency.onmicrosoft.com"}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []calendars.Interval{{Start: day.Add(9 * time.Hour), End: day.Add(10 * time.Hour)}}, busy["room2@agency.onmicrosoft.com"])
}
