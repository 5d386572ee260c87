package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func poolSlot(property, pool string, day int, from, to string) booking.Intent {
	in := slotOn(property, "", day, from, to)
	in.AgentPool = pool
	return in
}

// Five callers race for one slot with a pool of three agents: three are
// booked, each with a different agent, two meet a conflict, and a retry
// of each key names the same agent (or the same conflict).
func TestAPoolGivesEachRacingCallerADifferentAgent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "hall", Kind: "property", Capacity: 5, TimeZone: "Europe/Paris"}))
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "team", Members: []string{agent(1), agent(2), agent(3)}}))

	outs := make([]Outcome, 5)
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			outs[i], errs[i] = f.store.Commit(f.ctx, commitReq(fmt.Sprintf("race-%d", i), poolSlot("hall", "team", 9, "10:00", "10:30")))
		})
	}
	wg.Wait()
	agents := map[string]bool{}
	conflicts := 0
	for i, out := range outs {
		require.NoError(t, errs[i])
		if out.Conflict != nil {
			conflicts++
			continue
		}
		require.Equal(t, "team", out.Booking.Intent.AgentPool)
		require.False(t, agents[out.Booking.Intent.AgentID], "%s booked twice", out.Booking.Intent.AgentID)
		agents[out.Booking.Intent.AgentID] = true
	}
	require.Len(t, agents, 3)
	require.Equal(t, 2, conflicts)

	for i, first := range outs {
		again, err := f.store.Commit(f.ctx, commitReq(fmt.Sprintf("race-%d", i), poolSlot("hall", "team", 9, "10:00", "10:30")))
		require.NoError(t, err)
		require.True(t, again.Replayed)
		if first.Conflict != nil {
			require.NotNil(t, again.Conflict)
			continue
		}
		require.Equal(t, first.Booking.Intent.AgentID, again.Booking.Intent.AgentID, "a retry names the same agent")
	}
	av, err := f.store.Availability(f.ctx, booking.AvailabilityQuery{PropertyID: "hall", AgentPool: "team", From: on(9, "10:00"), To: on(9, "11:00")})
	require.NoError(t, err)
	require.Len(t, av.Slots, 1, "10:00 is gone for the whole team; 10:30 is open")
	require.Equal(t, "2026-12-09T10:30", av.Slots[0].LocalStart)
}

// The least-booked member that day goes first; a member off or outside
// its hours is passed over; when nobody can, the refusal is the rule's.
func TestAPoolChoosesFairlyAndPassesOverWhoCannot(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "hall", Kind: "property", Capacity: 5, TimeZone: "Europe/Paris"}))
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "team", Members: []string{agent(1), agent(2)}}))
	f.booked(t, "a1-busy", slotOn("paris", agent(1), 9, "09:00", "09:30"))

	f.clock.Advance(time.Minute) // bookings made one after the other
	out, err := f.store.Commit(f.ctx, commitReq("fair", poolSlot("hall", "team", 9, "14:00", "14:30")))
	require.NoError(t, err)
	require.Equal(t, agent(2), out.Booking.Intent.AgentID, "agent 1 has a booking that day already")
	f.clock.Advance(time.Minute)
	out, err = f.store.Commit(f.ctx, commitReq("next", poolSlot("hall", "team", 9, "15:00", "15:30")))
	require.NoError(t, err)
	require.Equal(t, agent(1), out.Booking.Intent.AgentID, "one each: the one assigned longest ago")

	f.rules(t, agent(1), "agent", booking.Rules{TimeOff: []booking.Span{{Start: on(10, "00:00"), End: on(11, "00:00")}}})
	out, err = f.store.Commit(f.ctx, commitReq("off", poolSlot("hall", "team", 10, "10:00", "10:30")))
	require.NoError(t, err)
	require.Equal(t, agent(2), out.Booking.Intent.AgentID)
	f.rules(t, agent(2), "agent", booking.Rules{TimeOff: []booking.Span{{Start: on(10, "00:00"), End: on(11, "00:00")}}})
	_, err = f.store.Commit(f.ctx, commitReq("nobody", poolSlot("hall", "team", 10, "12:00", "12:30")))
	requireCode(t, err, booking.CodeTimeOff)
}

func TestBadPoolsAreRefusedWithTheirCode(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, c := range []struct {
		pool booking.Pool
		code booking.Code
	}{
		{booking.Pool{ID: "empty"}, booking.CodeEmptyPool},
		{booking.Pool{ID: "ghosts", Members: []string{"nobody"}}, booking.CodeUnknownResource},
		{booking.Pool{ID: "not-agents", Members: []string{"paris"}}, booking.CodeWrongResourceKind},
		{booking.Pool{ID: "twice", Members: []string{agent(1), agent(1)}}, booking.CodeDuplicateResource},
	} {
		requireCode(t, f.store.PutPool(f.ctx, c.pool), c.code)
	}
	var n int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM agent_pool").Scan(&n))
	require.Zero(t, n, "nothing written")
	_, err := f.store.Commit(f.ctx, commitReq("no-pool", poolSlot("paris", "no-such-team", 9, "10:00", "10:30")))
	requireCode(t, err, booking.CodeUnknownPool)
	d, err := f.store.Decision(f.ctx, "no-pool")
	require.NoError(t, err)
	require.Equal(t, booking.CodeUnknownPool, d.Refusal.Code, "the store remembers the refusal")
	before := f.count(t)
	both := poolSlot("paris", "team", 9, "10:00", "10:30")
	both.AgentID = agent(1)
	_, err = f.store.Commit(f.ctx, commitReq("both", both))
	requireCode(t, err, booking.CodeDuplicateResource)
	require.Equal(t, before, f.count(t))
}

// A member also named among the booking's other resources cannot be its
// agent too: it is passed over, and a pool left without anyone is a
// refusal. Before, it was chosen, written twice into the occupancy and the
// commit failed as contention, forever.
func TestAPoolMemberNamedAsAnExtraIsPassedOver(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.UpsertResource(f.ctx, booking.Resource{ID: "hall", Kind: "property", Capacity: 5, TimeZone: "Europe/Paris"}))
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "team", Members: []string{agent(1), agent(2)}}))
	require.NoError(t, f.store.PutPool(f.ctx, booking.Pool{ID: "solo", Members: []string{agent(1)}}))

	in := poolSlot("hall", "team", 9, "10:00", "10:30")
	in.ExtraResources = []string{agent(1)}
	out, err := f.store.Commit(f.ctx, commitReq("extra-member", in))
	require.NoError(t, err)
	require.Equal(t, agent(2), out.Booking.Intent.AgentID)

	solo := poolSlot("hall", "solo", 9, "11:00", "11:30")
	solo.ExtraResources = []string{agent(1)}
	_, err = f.store.Commit(f.ctx, commitReq("only-the-extra", solo))
	requireCode(t, err, booking.CodeEmptyPool)
}

// A weekly limit counts the resource's ISO week, in its zone.
func TestAWeeklyLimitCountsTheWeek(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.rules(t, "weekly-agent", "agent", booking.Rules{WeeklyLimit: 2})
	_, err := f.store.Commit(f.ctx, commitReq("w1", slotOn("paris", "weekly-agent", 8, "10:00", "10:30"))) // Tuesday
	require.NoError(t, err)
	_, err = f.store.Commit(f.ctx, commitReq("w2", slotOn("duo", "weekly-agent", 11, "10:00", "10:30"))) // Friday
	require.NoError(t, err)
	_, err = f.store.Commit(f.ctx, commitReq("w3", slotOn("paris", "weekly-agent", 12, "10:00", "10:30"))) // Saturday
	requireCode(t, err, booking.CodeLimitReached)
	_, err = f.store.Commit(f.ctx, commitReq("w4", slotOn("paris", "weekly-agent", 14, "10:00", "10:30"))) // next Monday
	require.NoError(t, err)
}
