package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func TestHoldConfirmAndExpire(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_hold", intent("paris", agent(0), "10:00", "10:30"))
	req.Hold = true
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.Equal(t, booking.StatusHeld, out.Booking.Status)
	require.Equal(t, testNow.Add(testPolicy.HoldTTL), *out.Booking.HoldExpiresAt)

	// A live hold occupies the slot.
	other, err := f.store.Commit(f.ctx, commitReq("req_other", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	require.NotNil(t, other.Conflict)

	b, err := f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_hold"})
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, b.Status)
	again, err := f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_hold"})
	require.NoError(t, err)
	require.Equal(t, b, again, "confirming twice changes nothing")

	// A hold confirmed after its TTL is expired, not confirmed.
	f.held(t, "req_hold_late", intent("paris", agent(2), "12:00", "12:30"))
	f.clock.Advance(testPolicy.HoldTTL)
	late, err := f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_hold_late"})
	require.NoError(t, err)
	require.Equal(t, booking.StatusExpired, late.Status)
	looked, err := f.store.Lookup(f.ctx, "req_hold_late")
	require.NoError(t, err)
	require.Equal(t, booking.StatusExpired, looked.Status)
}

func TestExpiredHoldsFreeTheirSlot(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, key := range []string{"req_h1", "req_h2"} {
		req := commitReq(key, intent("paris", agent(0), map[string]string{"req_h1": "10:00", "req_h2": "11:00"}[key],
			map[string]string{"req_h1": "10:30", "req_h2": "11:30"}[key]))
		req.Hold = true
		_, err := f.store.Commit(f.ctx, req)
		require.NoError(t, err)
	}
	f.clock.Advance(testPolicy.HoldTTL + time.Second)
	// A commit that meets a stale hold expires it itself rather than waiting
	// for the sweeper.
	out, err := f.store.Commit(f.ctx, commitReq("req_after", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
	h1, err := f.store.Lookup(f.ctx, "req_h1")
	require.NoError(t, err)
	require.Equal(t, booking.StatusExpired, h1.Status)
	// The sweeper finds the other one, and only it.
	n, err := f.store.ExpireHolds(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = f.store.ExpireHolds(f.ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestReleaseFreesCapacityAndIsIdempotent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_rel", intent("paris", agent(0), "10:00", "10:30"))
	b, err := f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_rel"})
	require.NoError(t, err)
	require.Equal(t, booking.StatusCancelled, b.Status)
	again, err := f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_rel"})
	require.NoError(t, err)
	require.Equal(t, b, again)
	out, err := f.store.Commit(f.ctx, commitReq("req_rel_next", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err)
	require.Nil(t, out.Conflict, "released capacity is free at once")
	// The released key still means its intent: it is not booked afresh.
	replay, err := f.store.Commit(f.ctx, commitReq("req_rel", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	require.True(t, replay.Replayed)
	require.Equal(t, booking.StatusCancelled, replay.Booking.Status)

	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_never"})
	require.ErrorIs(t, err, booking.ErrNotFound)
	_, err = f.store.Lookup(f.ctx, "req_never")
	require.ErrorIs(t, err, booking.ErrNotFound)
}

func TestAHeldReplacementReleasesTheOldOnlyOnceConfirmed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_old", intent("paris", agent(0), "10:00", "10:30"))

	next := moving("req_old", intent("paris", agent(0), "16:00", "16:30"))
	f.held(t, "req_new", next)
	old, err := f.store.Lookup(f.ctx, "req_old")
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, old.Status, "a held replacement releases nothing")

	_, err = f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_new"})
	require.NoError(t, err)
	old, err = f.store.Lookup(f.ctx, "req_old")
	require.NoError(t, err)
	require.Equal(t, booking.StatusReleasedForReschedule, old.Status, "confirming it releases the old, in the same transaction")
	require.Equal(t, "req_new", old.ReplacedByRequestKey)
}

func TestPolicyVersions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.SetPolicy(f.ctx, testPolicy), "setting the same version again is a no-op")
	changed := testPolicy
	changed.SlotMinutes = 45
	requireCode(t, f.store.SetPolicy(f.ctx, changed), booking.CodePolicyImmutable)
	changed.Version = "showing-policy-2"
	require.NoError(t, f.store.SetPolicy(f.ctx, changed))
	cur, err := f.store.CurrentPolicy(f.ctx)
	require.NoError(t, err)
	require.Equal(t, changed, cur)
	var current int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM policy WHERE is_current").Scan(&current))
	require.Equal(t, 1, current)
	_, err = f.store.Commit(f.ctx, commitReq("req_pol", intent("paris", agent(0), "10:00", "10:30")))
	requireCode(t, err, booking.CodePolicyVersionChanged)
	bad := changed
	bad.Version, bad.ClosesAt = "showing-policy-3", bad.OpensAt
	requireCode(t, f.store.SetPolicy(f.ctx, bad), booking.CodeInvalidPolicy)
	// Sub-second TTLs would be truncated by the database and then read back
	// as "other rules": refused up front instead.
	bad = changed
	bad.Version, bad.HoldTTL = "showing-policy-4", 1500*time.Millisecond
	requireCode(t, f.store.SetPolicy(f.ctx, bad), booking.CodeInvalidPolicy)
}

func TestLoweringCapacityBelowLiveBookingsIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for i, slot := range [][2]string{{"10:00", "11:00"}, {"10:30", "11:30"}} {
		f.booked(t, "req_low_"+slot[0], intent("duo", agent(i), slot[0], slot[1]))
	}
	duo, err := f.store.Resource(f.ctx, "duo")
	require.NoError(t, err)
	duo.Capacity = 1
	requireCode(t, f.store.UpsertResource(f.ctx, duo), booking.CodeCapacityBelowBookings)
	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_low_10:00"})
	require.NoError(t, err)
	require.NoError(t, f.store.UpsertResource(f.ctx, duo))
	// Now capacity 1 is enforced, by the service and by the constraint.
	out, err := f.store.Commit(f.ctx, commitReq("req_low_again", intent("duo", agent(5), "11:00", "11:30")))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)
	var exclusive bool
	require.NoError(t, f.pool.QueryRow(f.ctx,
		"SELECT exclusive FROM booking_resource WHERE resource_id = 'duo' AND live").Scan(&exclusive))
	require.True(t, exclusive)
}

func TestReplacementEdgeCases(t *testing.T) {
	t.Parallel()
	f := setup(t)
	self := moving("req_self", intent("paris", agent(0), "10:00", "10:30"))
	_, err := f.store.Commit(f.ctx, commitReq("req_self", self))
	requireCode(t, err, booking.CodeInvalidReplacement)
	_, err = f.store.Commit(f.ctx, commitReq("req_plain", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	// A reused key naming only unknown resources is still a reused key.
	_, err = f.store.Commit(f.ctx, commitReq("req_plain", intent("nowhere", "nobody", "10:00", "10:30")))
	requireCode(t, err, booking.CodeRequestKeyReused)
}

// Confirm and Commit take the same resource locks, so a hold confirmed just
// before its expiry and a commit that finds it expired cannot both win on a
// resource whose capacity has no exclusion constraint behind it.
func TestConfirmAndCommitRaceOnExpiringHold(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		f := setup(t)
		// duo has capacity 2: one confirmed booking and one hold fill it.
		f.booked(t, "req_c", intent("duo", agent(0), "10:00", "10:30"))
		f.held(t, "req_a", intent("duo", agent(1), "10:00", "10:30"))
		f.clock.Advance(testPolicy.HoldTTL - time.Microsecond)
		_, errs := concurrently(2, func(i int) (Outcome, error) {
			if i == 0 {
				b, err := f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_a"})
				return Outcome{Booking: b}, err
			}
			f.clock.Advance(time.Millisecond)
			return f.store.Commit(f.ctx, commitReq("req_b", intent("duo", agent(2), "10:00", "10:30")))
		})
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		var live int
		require.NoError(t, f.pool.QueryRow(f.ctx,
			"SELECT count(*) FROM booking_resource WHERE resource_id = 'duo' AND live").Scan(&live))
		require.LessOrEqual(t, live, 2, "round %d", round)
	}
}

func TestRescheduleToAnOverlappingSlotSwapsInOneTransaction(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_old", intent("paris", agent(0), "10:00", "10:30"))

	// Half an hour later, overlapping the old slot on the same property and
	// agent: only possible because the old booking goes in the same commit.
	later := moving("req_old", intent("paris", agent(0), "10:15", "10:45"))
	out, err := f.store.Commit(f.ctx, commitReq("req_new", later))
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
	require.Equal(t, booking.StatusConfirmed, out.Booking.Status)
	old, err := f.store.Lookup(f.ctx, "req_old")
	require.NoError(t, err)
	require.Equal(t, booking.StatusReleasedForReschedule, old.Status)
	require.Equal(t, "req_new", old.ReplacedByRequestKey)
	again, err := f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_old"})
	require.NoError(t, err, "a cancel that comes after finds it moved")
	require.Equal(t, booking.StatusReleasedForReschedule, again.Status)

	// The old slot's free part is free; the new one is taken.
	out, err = f.store.Commit(f.ctx, commitReq("req_other", intent("paris", agent(1), "10:00", "10:15")))
	require.NoError(t, err)
	require.Nil(t, out.Conflict)
	out, err = f.store.Commit(f.ctx, commitReq("req_late", intent("paris", agent(1), "10:30", "11:00")))
	require.NoError(t, err)
	require.NotNil(t, out.Conflict)

	// A booking already replaced cannot be rescheduled again.
	twice := moving("req_old", intent("paris", agent(2), "14:00", "14:30"))
	_, err = f.store.Commit(f.ctx, commitReq("req_twice", twice))
	requireCode(t, err, booking.CodeInvalidReplacement)
	var n int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking WHERE request_key = 'req_twice'").Scan(&n))
	require.Zero(t, n, "nothing written")
}

func TestTwoReschedulesOfOneBookingCannotBothStand(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_old", intent("paris", agent(0), "10:00", "10:30"))
	a := moving("req_old", intent("paris", agent(0), "14:00", "14:30"))
	f.held(t, "req_a", a)
	b := moving("req_old", intent("paris", agent(0), "16:00", "16:30"))
	_, err := f.store.Commit(f.ctx, commitReq("req_b", b))
	require.NoError(t, err, "the first to confirm wins")

	_, err = f.store.Confirm(f.ctx, ConfirmRequest{RequestKey: "req_a"})
	requireCode(t, err, booking.CodeInvalidReplacement)
	ra, err := f.store.Lookup(f.ctx, "req_a")
	require.NoError(t, err)
	require.Equal(t, booking.StatusHeld, ra.Status, "the losing hold is not confirmed")
	old, err := f.store.Lookup(f.ctx, "req_old")
	require.NoError(t, err)
	require.Equal(t, "req_b", old.ReplacedByRequestKey)
}
