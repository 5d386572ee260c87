package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// benchPairs is how many property/agent pairs the benchmark books on.
const benchPairs = 8

// Commit against its floor: a bare INSERT of one booking row into the same
// table, on the same database, in the same run. BENCHMARKS.md has the
// numbers and the command.
//
// Every case starts from 1,000 existing bookings with fresh statistics, as a
// running store has. "workers=N" runs commits and bare inserts in
// alternating blocks on one database (pairedBench), so whatever else the
// machine does lands on both sides alike; eight workers each book their own
// property/agent pair, contending for the database but not for one
// resource. "hotspot" puts all eight on one pair, where commits serialise
// by design.
func BenchmarkCommit(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			pairedBench(b, benchSetup(b, 1_000), workers)
		})
	}
	b.Run("workers=8/hotspot_commit", func(b *testing.B) {
		f := benchSetup(b, 1_000)
		runWorkers(b, 8, func(_, i int) { f.benchCommit(b, i, 0) })
	})
	for _, existing := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("existing=%d/commit", existing), func(b *testing.B) {
			f := benchSetup(b, existing)
			runWorkers(b, 1, func(_, i int) { f.benchCommit(b, i, i%benchPairs) })
		})
	}
}

// pairedBench alternates phases of commits and bare inserts, a tenth of
// b.N each, all workers in each phase, and reports each side's wall time
// per call, their ratio and the commit throughput. Run as separate
// benchmarks, the two sides drifted apart by up to a fifth on this machine
// (whatever else it ran landed on one side only); interleaved, they share
// the drift, and no phase overlaps another.
func pairedBench(b *testing.B, f *fixture, workers int) {
	const rounds = 10
	sides := [2]func(w, i int){
		func(w, i int) { f.benchCommit(b, i, w) },
		func(w, i int) { f.bareInsert(b, w, i) },
	}
	var spent [2]time.Duration
	b.ResetTimer()
	for r := range rounds {
		for side, fn := range sides {
			start := time.Now()
			runRange(workers, b.N*r/rounds, b.N*(r+1)/rounds, fn)
			spent[side] += time.Since(start)
		}
	}
	commit := float64(spent[0]) / float64(b.N)
	insert := float64(spent[1]) / float64(b.N)
	b.ReportMetric(commit/1e3, "commit-µs")
	b.ReportMetric(insert/1e3, "insert-µs")
	b.ReportMetric(commit/insert, "commit/insert")
	b.ReportMetric(1e9/commit, "commits/s")
}

func benchProp(p int) string  { return fmt.Sprintf("bench-prop-%d", p) }
func benchAgent(p int) string { return fmt.Sprintf("bench-agent-%d", p) }

// benchSetup is setup plus the benchmark's resources, with `existing`
// confirmed bookings already on them (in 2040, away from the slots the
// benchmark books) and statistics gathered.
func benchSetup(b testing.TB, existing int) *fixture {
	f := setup(b)
	for p := range benchPairs {
		require.NoError(b, f.store.UpsertResource(f.ctx, booking.Resource{ID: benchProp(p), Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"}))
		require.NoError(b, f.store.UpsertResource(f.ctx, booking.Resource{ID: benchAgent(p), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	}
	_, err := f.pool.Exec(f.ctx, `
WITH b AS (
  INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                       policy_version, intent_fingerprint, committed_at)
  SELECT gen_random_uuid(), 'seed_' || i, 'confirmed', 'bench-prop-' || (i % 8), 'bench-agent-' || (i % 8),
         ts, ts + interval '30 minutes', 'Europe/Paris', $2, '\x00', now()
  FROM generate_series(1, $1) AS i,
       LATERAL (SELECT timestamptz '2040-01-01 08:00+01' + (i / 192) * interval '1 day'
                       + ((i / 8) % 24) * interval '30 minutes') AS t(ts)
  RETURNING booking_id, property_id, agent_id, starts_at, ends_at)
INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
SELECT booking_id, r, res.resource_no, tstzrange(starts_at, ends_at), true, true
FROM b, unnest(ARRAY[property_id, agent_id]) AS r JOIN resource res ON res.resource_id = r`,
		existing, testPolicy.Version)
	require.NoError(b, err)
	_, err = f.pool.Exec(f.ctx, "VACUUM ANALYZE")
	require.NoError(b, err)
	return f
}

// benchSlot is the i-th half-hour slot within bookable hours from 2027 on.
// The zone comes from LoadZone's cache: a zone read afresh parses its tz
// file on every call, which cost both sides of the comparison alike and so
// flattered the ratio.
func benchSlot(i int) (time.Time, time.Time) {
	paris, _ := localtime.LoadZone("Europe/Paris")
	day := time.Date(2027, 1, 4, 8, 0, 0, 0, paris).AddDate(0, 0, i/24)
	start := day.Add(time.Duration(i%24) * 30 * time.Minute)
	return start, start.Add(30 * time.Minute)
}

// benchCommit books call i on pair p; slots are distinct per i, so every
// commit books.
func (f *fixture) benchCommit(b testing.TB, i, p int) {
	start, end := benchSlot(i)
	out, err := f.store.Commit(f.ctx, CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: fmt.Sprintf("bench_%d", i), ExpectedPolicyVersion: testPolicy.Version,
		Intent: booking.Intent{PropertyID: benchProp(p), AgentID: benchAgent(p), StartsAt: start, EndsAt: end, TimeZone: "Europe/Paris"}}})
	if err != nil || out.Conflict != nil {
		b.Fatalf("commit %d: %v %+v", i, err, out.Conflict)
	}
}

func (f *fixture) bareInsert(b testing.TB, p, i int) {
	start, end := benchSlot(i)
	_, err := f.pool.Exec(f.ctx, `
INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                     policy_version, intent_fingerprint, committed_at)
VALUES ($1, $2, 'confirmed', $3, $4, $5, $6, 'Europe/Paris', $7, '\x00', now())`,
		uuid.New(), fmt.Sprintf("bare_%d", i), benchProp(p), benchAgent(p), start, end, testPolicy.Version)
	if err != nil {
		b.Fatal(err)
	}
}

// runWorkers runs b.N calls of fn over n goroutines, each call with its
// own i and the number of the goroutine making it: with one pair per
// goroutine, spread commits never wait for each other's resource locks.
func runWorkers(b *testing.B, n int, fn func(w, i int)) {
	b.ResetTimer()
	runRange(n, 0, b.N, fn)
}

// runRange runs fn for every i in [lo, hi) over n goroutines.
func runRange(n, lo, hi int, fn func(w, i int)) {
	var next atomic.Int64
	next.Store(int64(lo))
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < hi; i = int(next.Add(1)) - 1 {
				fn(w, i)
			}
		})
	}
	wg.Wait()
}
