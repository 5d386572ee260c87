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
const storeBeforeAgencies = `
INSERT INTO resource (resource_id, kind, capacity, time_zone) VALUES
    ('paris', 'property', 1, 'Europe/Paris'), ('agent', 'agent', 1, 'Europe/Paris');
INSERT INTO policy (version, slot_minutes, opens_at, closes_at, hold_ttl_seconds, is_current)
    VALUES ('p1', 30, '08:00', '20:00', 600, true);
INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                     policy_version, intent_fingerprint)
    VALUES ('00000000-0000-0000-0000-000000000001', 'old', 'confirmed', 'paris', 'agent',
            '2027-01-04 09:00+01', '2027-01-04 09:30+01', 'Europe/Paris', 'p1', '\x00');
INSERT INTO booking_resource (booking_id, resource_id, occupied, live, exclusive)
    SELECT '00000000-0000-0000-0000-000000000001', r, tstzrange('2027-01-04 09:00+01', '2027-01-04 09:30+01'), true, true
    FROM unnest(ARRAY['paris', 'agent']) AS r;
INSERT INTO booking_event (request_key, booking_id, kind) VALUES ('old', '00000000-0000-0000-0000-000000000001', 'committed');
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
		_, err := tx.Exec(ctx, `SELECT set_config('bookingsaga.agency', '2', true);
INSERT INTO resource (resource_id, kind, capacity, time_zone) VALUES
    ('paris', 'property', 1, 'Europe/Paris'), ('agent', 'agent', 1, 'Europe/Paris');
INSERT INTO policy (version, slot_minutes, opens_at, closes_at, hold_ttl_seconds, is_current)
    VALUES ('p1', 30, '08:00', '20:00', 600, true);
INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                     policy_version, intent_fingerprint)
    VALUES ('00000000-0000-0000-0000-000000000002', 'old', 'confirmed', 'paris', 'agent',
            '2027-01-04 09:00+01', '2027-01-04 09:30+01', 'Europe/Paris', 'p1', '\x00')`)
		return err
	}), "the same names and request_key in another agency")
}
