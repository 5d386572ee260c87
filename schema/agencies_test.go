package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/schema"
)

// beforeAgencies is the last version before migration 037's agencies.
const beforeAgencies = 36

// A store as the build before left it: a booking with its occupancy,
// events, a sealed contact, and a refusal.
var storeBeforeAgencies = catalogueSQL + bookingSQL(oldBookingID) + oldOccupancySQL + `
INSERT INTO booking_event (request_key, booking_id, kind) VALUES ('old', '` + oldBookingID + `', 'committed');
INSERT INTO vault.contact_key (request_key, data_key) VALUES ('old', decode(repeat('00', 32), 'hex'));
INSERT INTO booking_refusal (request_key, outcome, code, message, intent, intent_fingerprint, policy_version, decided_at)
    VALUES ('refused', 'conflict', 'slot_taken', 'taken', '{}', '\x00', 'p1', now());`

// agencyRows counts, per table, the rows a transaction naming agency no
// finds ("": naming none), and how many of them are not that agency's.
func agencyRows(t *testing.T, ctx context.Context, conn *pgx.Conn, no string) (found, foreign map[string]int) {
	t.Helper()
	found, foreign = map[string]int{}, map[string]int{}
	require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('bookingsaga.agency', $1, true)", no); err != nil {
			return err
		}
		for _, table := range []string{"resource", "policy", "booking", "booking_resource", "booking_event",
			"vault.contact_key", "booking_refusal"} {
			var n, other int
			if err := tx.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE agency_no IS DISTINCT FROM nullif($1, '')::int) FROM "+table, no).Scan(&n, &other); err != nil {
				return err
			}
			found[table], foreign[table] = n, other
		}
		return nil
	}))
	return found, foreign
}

// A store with bookings from the build before keeps every booking,
// decision and contact under the default agency, through both halves of
// the migration; after the rollout's, another agency may take the same
// request_key, and sees none of the default agency's rows.
func TestAStoreOfTheBuildBeforeBecomesTheDefaultAgencys(t *testing.T) {
	t.Parallel()
	ctx, conn := setup(t)
	require.NoError(t, schema.MigrateTo(ctx, conn, beforeAgencies))
	_, err := conn.Exec(ctx, storeBeforeAgencies)
	require.NoError(t, err)
	want := map[string]int{"resource": 2, "policy": 1, "booking": 1, "booking_resource": 2, "booking_event": 1,
		"vault.contact_key": 1, "booking_refusal": 1}

	require.NoError(t, schema.Migrate(ctx, conn))
	found, foreign := agencyRows(t, ctx, conn, "1")
	require.Equal(t, want, found, "the expand half")
	require.Zero(t, foreign["booking"]+foreign["booking_event"]+foreign["vault.contact_key"])
	found, _ = agencyRows(t, ctx, conn, "")
	require.Equal(t, want, found, "a worker of the build before names no agency and finds the default one's rows")

	require.NoError(t, schema.MigrateAfterRollout(ctx, conn))
	found, _ = agencyRows(t, ctx, conn, "1")
	require.Equal(t, want, found, "the contract half")
	_, err = conn.Exec(ctx, "INSERT INTO agency (agency_no, agency_id) VALUES (2, 'lyon')")
	require.NoError(t, err)
	for _, other := range []string{"2", ""} {
		found, _ = agencyRows(t, ctx, conn, other)
		for table, n := range found {
			require.Zero(t, n, "agency %q sees the default agency's %s", other, table)
		}
	}
	require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('bookingsaga.agency', '2', true)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, catalogueSQL+bookingSQL("00000000-0000-0000-0000-000000000002"))
		return err
	}), "the same names and request_key in another agency")
}
