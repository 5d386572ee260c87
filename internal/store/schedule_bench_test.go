package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The commit with scheduling rules against today's plain commit, side by
// side on one database (BENCHMARKS.md has the command and the numbers):
//
//   - plain: a property and an agent without rules (the one-statement
//     fast path);
//   - hours: the same with weekly hours on both (the fast path too, which
//     judges hours before its statement);
//   - pool5: hours on the property, hours and a daily limit on each of
//     five agents, booked as "whoever is free" in their pool.
//
// Phases of each side alternate, a tenth of b.N at a time, so whatever
// else the machine does lands on all alike.
func BenchmarkScheduledCommit(b *testing.B) {
	f := benchSetup(b, 1_000)
	allWeek := booking.Rules{Hours: everyDay("08:00", "20:00")}
	limited := booking.Rules{Hours: everyDay("08:00", "20:00"), DailyLimit: 1000}
	for _, r := range []booking.Resource{
		{ID: "hours-prop", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", Rules: &allWeek},
		{ID: "hours-agent", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", Rules: &allWeek},
		{ID: "pool-prop", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", Rules: &allWeek},
	} {
		require.NoError(b, f.store.UpsertResource(f.ctx, r))
	}
	var members []string
	for a := range 5 {
		id := fmt.Sprintf("pool-agent-%d", a)
		require.NoError(b, f.store.UpsertResource(f.ctx, booking.Resource{ID: id, Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", Rules: &limited}))
		members = append(members, id)
	}
	require.NoError(b, f.store.PutPool(f.ctx, booking.Pool{ID: "bench-pool", Members: members}))
	commit := func(prefix string, in func(start, end time.Time) booking.Intent) func(int) {
		return func(i int) {
			start, end := benchSlot(i)
			out, err := f.store.Commit(f.ctx, CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: fmt.Sprintf("%s_%d", prefix, i),
				ExpectedPolicyVersion: testPolicy.Version, Intent: in(start, end)}})
			if err != nil || out.Conflict != nil {
				b.Fatalf("%s %d: %v %+v", prefix, i, err, out.Conflict)
			}
		}
	}
	sides := []struct {
		name string
		fn   func(int)
	}{
		{"plain", commit("plain", func(s, e time.Time) booking.Intent {
			return booking.Intent{PropertyID: benchProp(0), AgentID: benchAgent(0), StartsAt: s, EndsAt: e, TimeZone: "Europe/Paris"}
		})},
		{"hours", commit("hours", func(s, e time.Time) booking.Intent {
			return booking.Intent{PropertyID: "hours-prop", AgentID: "hours-agent", StartsAt: s, EndsAt: e, TimeZone: "Europe/Paris"}
		})},
		{"pool5", commit("pool5", func(s, e time.Time) booking.Intent {
			return booking.Intent{PropertyID: "pool-prop", AgentPool: "bench-pool", StartsAt: s, EndsAt: e, TimeZone: "Europe/Paris"}
		})},
	}
	const rounds = 10
	spent := make([]time.Duration, len(sides))
	b.ResetTimer()
	for r := range rounds {
		for s, side := range sides {
			start := time.Now()
			for i := b.N * r / rounds; i < b.N*(r+1)/rounds; i++ {
				side.fn(i)
			}
			spent[s] += time.Since(start)
		}
	}
	plain := float64(spent[0]) / float64(b.N)
	for s, side := range sides {
		per := float64(spent[s]) / float64(b.N)
		b.ReportMetric(per/1e3, side.name+"-µs")
		if s > 0 {
			b.ReportMetric(per/plain, side.name+"/plain")
		}
	}
}

func everyDay(opens, closes string) []booking.WeeklyHours {
	var out []booking.WeeklyHours
	for _, d := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		out = append(out, booking.WeeklyHours{Day: d, Opens: opens, Closes: closes})
	}
	return out
}
