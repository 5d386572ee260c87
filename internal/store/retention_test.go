package store

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func TestRetentionAnonymisesBookingsAndDeletesRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.sealedCommit(t, "req_old", "10:00", "10:30")
	out, err := f.store.Commit(f.ctx, commitReq("req_lost", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict, "the store keeps the refusal")
	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_old"})
	require.NoError(t, err)
	f.sealedCommit(t, "req_late", "15:00", "15:30")
	var refusals int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_refusal").Scan(&refusals))
	require.Equal(t, 1, refusals)

	n, err := f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is due within two years")

	// Two years after the first viewing: req_old and the refusal are
	// due; req_late, five hours later, is not yet.
	f.clock.Advance(paris("10:30").Sub(testNow) + 2*365*24*time.Hour + time.Hour)
	n, err = f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 2, n)

	for _, key := range []string{"req_old", "req_lost"} {
		_, err := f.store.Decision(f.ctx, key)
		require.ErrorIs(t, err, booking.ErrNotFound, "%s no longer names anything", key)
		var left int
		require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT (SELECT count(*) FROM booking_event WHERE request_key = $1)
	+ (SELECT count(*) FROM vault.contact_key WHERE request_key = $1)`, key).Scan(&left))
		require.Zero(t, left, key)
	}
	var anon string
	var status booking.Status
	var at *time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT request_key, status, anonymised_at FROM booking WHERE starts_at = $1",
		paris("10:00")).Scan(&anon, &status, &at))
	require.True(t, strings.HasPrefix(anon, booking.AnonymousPrefix), anon)
	require.Equal(t, booking.StatusCancelled, status, "the row stays for the records")
	require.NotNil(t, at)
	var kinds []string
	rows, err := f.pool.Query(f.ctx, "SELECT kind FROM booking_event WHERE request_key = $1 ORDER BY event_id", anon)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		kinds = append(kinds, k)
	}
	require.Equal(t, []string{"committed", "cancelled"}, kinds, "its events follow it under the anonymous key")
	_, err = f.store.Lookup(f.ctx, "req_late")
	require.NoError(t, err, "a booking inside its period keeps its key")

	// Six years on, the log's anonymised rows go; the others stay.
	var before int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_event").Scan(&before))
	f.clock.Advance(4 * 365 * 24 * time.Hour)
	n, err = f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1+before, n, "req_late anonymised, then every event deleted")
	var events int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_event").Scan(&events))
	require.Zero(t, events)
}

func TestTheEventLogRefusesEveryChangeOutsideRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.sealedCommit(t, "req_kept", "10:00", "10:30")
	for _, q := range []string{
		"UPDATE booking_event SET detail = '{}'",
		"UPDATE booking_event SET request_key = 'anon-x'",
		"DELETE FROM booking_event",
	} {
		_, err := f.pool.Exec(f.ctx, q)
		require.ErrorContains(t, err, "append-only", q)
	}
}

// Two years on, a rescheduled pair leaves no original key anywhere: not
// in the rows' keys, not in the events' details that named the partner.
func TestRetentionLeavesNoOriginalKeyBehind(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_first", intent("paris", agent(0), "10:00", "10:30"))
	later := moving("req_first", intent("paris", agent(0), "11:00", "11:30"))
	f.booked(t, "req_moved", later)
	// A key v0.1.0 let a caller choose, which looks anonymous already.
	_, err := f.store.Commit(f.ctx, commitReq("req_legacy", intent("paris", agent(1), "14:00", "14:30")))
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, "UPDATE booking SET request_key = 'anon-legacy' WHERE request_key = 'req_legacy'")
	require.NoError(t, err)
	// A key whose contact was sealed and erased before anything booked.
	_, err = f.store.SealContact(f.ctx, "req_never", ada, "Europe/Paris")
	require.NoError(t, err)
	require.NoError(t, f.store.EraseContact(f.ctx, "req_never", "request"))

	f.clock.Advance(3 * 365 * 24 * time.Hour)
	for {
		n, err := f.store.ApplyRetention(f.ctx, 100)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	var left int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT
  (SELECT count(*) FROM booking_event WHERE request_key NOT LIKE 'anon-%' OR detail::text ~ 'req_(first|moved|never)')
+ (SELECT count(*) FROM booking WHERE request_key NOT LIKE 'anon-%' OR replaces_request_key NOT LIKE 'anon-%'
     OR replaced_by_request_key NOT LIKE 'anon-%' OR anonymised_at IS NULL)
+ (SELECT count(*) FROM vault.contact_key)`).Scan(&left))
	require.Zero(t, left)
}

// A release recorded again from a saga (after a restore lost it) never
// brings back a key retention took away: retention keeps the booking id
// under the anonymous key, and a viewing that is over is left as it is.
func TestARecordedReleaseNeverUndoesRetention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out, err := f.store.Commit(f.ctx, commitReq("req_retired", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	saga := out.Booking // what the saga still holds
	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_retired"})
	require.NoError(t, err)
	f.clock.Advance(paris("10:30").Sub(testNow) + 2*365*24*time.Hour + time.Hour)
	n, err := f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	wrote, err := f.store.RecordRelease(f.ctx, saga, booking.StatusCancelled, "")
	require.NoError(t, err)
	require.False(t, wrote)
	_, err = f.store.Decision(f.ctx, "req_retired")
	require.ErrorIs(t, err, booking.ErrNotFound, "the key stays gone")
}

// find_booking's attempts per reference are one count for every process
// (two stores over one database here), a new window opens once the last
// is over, and retention deletes windows a day old.
func TestFindAttemptsAreCountedForEveryProcess(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := New(f.pool, Config{Now: f.clock.Now})
	for i := range 5 {
		st := f.store
		if i%2 == 1 {
			st = other
		}
		ok, err := st.SpendFindAttempt(f.ctx, "BSABCDEFGH", 5, time.Hour)
		require.NoError(t, err)
		require.True(t, ok, "attempt %d", i+1)
	}
	ok, err := other.SpendFindAttempt(f.ctx, "BSABCDEFGH", 5, time.Hour)
	require.NoError(t, err)
	require.False(t, ok, "the sixth, from either process")
	ok, err = f.store.SpendFindAttempt(f.ctx, "BSZZZZZZZZ", 5, time.Hour)
	require.NoError(t, err)
	require.True(t, ok, "another reference has its own count")

	f.clock.Advance(time.Hour)
	ok, err = f.store.SpendFindAttempt(f.ctx, "BSABCDEFGH", 5, time.Hour)
	require.NoError(t, err)
	require.True(t, ok, "a new window")

	f.clock.Advance(25 * time.Hour)
	_, err = f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	var left int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM find_attempt").Scan(&left))
	require.Zero(t, left, "windows a day old are gone")
}
