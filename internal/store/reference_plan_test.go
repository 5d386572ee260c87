package store

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// The reference checks never hash a row's key. Under the agencies'
// row-level security a qual that calls a function on a column
// (request_reference(request_key)) is not leakproof, so PostgreSQL may not
// use it in an index scan ahead of the policy: the index on (agency_no,
// request_reference(request_key)) was searched by agency alone, and every
// commit hashed every booking and refusal of its agency (3–7 ms a commit
// at a thousand; linear in the agency's bookings). The reference is
// stored with its key (migration 049), and each lookup compares it, by
// index.
func TestReferenceLookupsCompareTheStoredReference(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_ref", intent("paris", agent(0), "10:00", "10:30"))
	for name, q := range map[string]struct{ sql, lit string }{
		"a commit's reference check": {referenceTakenSQL, "'req_other'"},
		"a reference's keys":         {referenceKeysSQL, `'\x0102030405'`},
	} {
		err := pgx.BeginFunc(f.ctx, f.pool, func(tx pgx.Tx) error {
			// A prepared statement, as pgx's cache makes it, on the
			// generic plan the commit forces (lockResourcesSQL).
			for _, s := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE q AS " + q.sql} {
				if _, err := tx.Exec(f.ctx, s); err != nil {
					return err
				}
			}
			rows, err := tx.Query(f.ctx, "EXPLAIN (VERBOSE) EXECUTE q("+q.lit+")")
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			require.NotRegexp(t, `request_reference\(\w+\.request_key\)`, plan, "%s hashes each row's key:\n%s", name, plan)
			require.NotContains(t, plan, "Seq Scan", "%s:\n%s", name, plan)
			_, err = tx.Exec(f.ctx, "DEALLOCATE q")
			return err
		})
		require.NoError(t, err, name)
	}
}
