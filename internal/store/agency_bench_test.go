package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The row-level security that keeps agencies apart, against none: the
// same commits on one database, in alternating phases with the policies
// forced on the store's login (as deployed) and not (the owner then
// passes them, as every login did before agencies). BENCHMARKS.md has
// the numbers and the command.
func BenchmarkCommitUnderPolicies(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			f := benchSetup(b, 1_000)
			var tables []string
			rows, err := f.pool.Query(f.ctx, `SELECT oid::regclass::text FROM pg_class WHERE relforcerowsecurity`)
			require.NoError(b, err)
			for rows.Next() {
				var t string
				require.NoError(b, rows.Scan(&t))
				tables = append(tables, t)
			}
			require.NoError(b, rows.Err())
			require.NotEmpty(b, tables)
			force := func(on bool) {
				verb := "NO FORCE"
				if on {
					verb = "FORCE"
				}
				for _, t := range tables {
					_, err := f.pool.Exec(f.ctx, "ALTER TABLE "+t+" "+verb+" ROW LEVEL SECURITY")
					require.NoError(b, err)
				}
			}
			const rounds = 10
			var spent [2]time.Duration
			b.ResetTimer()
			for r := range rounds {
				for side := range spent {
					b.StopTimer()
					force(side == 0)
					b.StartTimer()
					start := time.Now()
					// Each side books its own slots: side 1's calls follow all of side 0's.
					lo, hi := side*b.N+b.N*r/rounds, side*b.N+b.N*(r+1)/rounds
					runRange(workers, lo, hi, func(w, i int) { f.benchCommit(b, i, w) })
					spent[side] += time.Since(start)
				}
			}
			policies, none := float64(spent[0])/float64(b.N), float64(spent[1])/float64(b.N)
			b.ReportMetric(policies/1e3, "policies-µs")
			b.ReportMetric(none/1e3, "none-µs")
			b.ReportMetric(policies/none, "policies/none")
		})
	}
}
