package schema_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// setup gives a connection to an empty database of the test's own: the
// one pgtest hands out is already migrated.
func setup(t *testing.T) (context.Context, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	pool, url := pgtest.NewWithURL(t)
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	cfg.Database += "_empty"
	cfg.RuntimeParams["bookingsaga.agency"] = "1" // the tests' rows are the default agency's
	_, err = pool.Exec(ctx, "CREATE DATABASE "+cfg.Database+" TEMPLATE template0")
	require.NoError(t, err)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close(ctx)
		_, _ = pool.Exec(ctx, "DROP DATABASE IF EXISTS "+cfg.Database+" WITH (FORCE)")
	})
	return ctx, conn
}

// catalogueSQL, bookingSQL and oldOccupancySQL write, as a build of
// their time would, a catalogue and a booking with key "old" on it.
const catalogueSQL = `
INSERT INTO resource (resource_id, kind, capacity, time_zone) VALUES
    ('paris', 'property', 1, 'Europe/Paris'), ('agent', 'agent', 1, 'Europe/Paris');
INSERT INTO policy (version, slot_minutes, opens_at, closes_at, hold_ttl_seconds, is_current)
    VALUES ('p1', 30, '08:00', '20:00', 600, true);`

const oldBookingID = "00000000-0000-0000-0000-000000000001"

func bookingSQL(id string) string {
	return `
INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                     policy_version, intent_fingerprint)
    VALUES ('` + id + `', 'old', 'confirmed', 'paris', 'agent',
            '2027-01-04 09:00+01', '2027-01-04 09:30+01', 'Europe/Paris', 'p1', '\x00');`
}

const oldOccupancySQL = `
INSERT INTO booking_resource (booking_id, resource_id, occupied, live, exclusive)
    SELECT '` + oldBookingID + `', r, tstzrange('2027-01-04 09:00+01', '2027-01-04 09:30+01'), true, true
    FROM unnest(ARRAY['paris', 'agent']) AS r;`

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want SQLSTATE %s, got %v", code, err)
	require.Equal(t, code, pgErr.Code)
}

// Bookings made before the integer occupancy keys keep guarding their
// slots after the upgrade.
func TestIntegerOccupancyKeysUpgradeExistingBookings(t *testing.T) {
	t.Parallel()
	ctx, conn := setup(t)
	require.NoError(t, schema.MigrateTo(ctx, conn, 2))
	_, err := conn.Exec(ctx, catalogueSQL+bookingSQL(oldBookingID)+oldOccupancySQL+`
INSERT INTO booking_event (request_key, kind) VALUES ('old', 'committed');`)
	require.NoError(t, err)

	require.NoError(t, schema.MigrateTo(ctx, conn, 3))

	var mismatched int
	require.NoError(t, conn.QueryRow(ctx, `
SELECT count(*) FROM booking_resource br JOIN resource r USING (resource_id)
WHERE br.resource_no IS DISTINCT FROM r.resource_no`).Scan(&mismatched))
	require.Zero(t, mismatched, "every occupancy row carries its resource's number")

	var events int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM booking_event WHERE request_key = 'old'").Scan(&events))
	require.Equal(t, 1, events)

	var busy int
	require.NoError(t, conn.QueryRow(ctx,
		"SELECT count(*) FROM live_occupancy('paris', tstzrange('2027-01-04 09:15+01', '2027-01-04 09:45+01'))").Scan(&busy))
	require.Equal(t, 1, busy, "the old booking is still found by the occupancy query")

	_, err = conn.Exec(ctx, `
INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                     policy_version, intent_fingerprint)
    VALUES ('00000000-0000-0000-0000-000000000002', 'new', 'confirmed', 'paris', 'agent',
            '2027-01-04 09:15+01', '2027-01-04 09:45+01', 'Europe/Paris', 'p1', '\x00')`)
	require.NoError(t, err)
	overlap := `
INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
VALUES ('00000000-0000-0000-0000-000000000002', 'paris', $1,
        tstzrange('2027-01-04 09:15+01', '2027-01-04 09:45+01'), true, true)`
	var parisNo, agentNo int32
	require.NoError(t, conn.QueryRow(ctx, "SELECT resource_no FROM resource WHERE resource_id = 'paris'").Scan(&parisNo))
	require.NoError(t, conn.QueryRow(ctx, "SELECT resource_no FROM resource WHERE resource_id = 'agent'").Scan(&agentNo))
	_, err = conn.Exec(ctx, overlap, parisNo)
	requireCode(t, err, "23P01") // the exclusion constraint still refuses the overlap
	_, err = conn.Exec(ctx, `
INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
VALUES ('00000000-0000-0000-0000-000000000002', 'paris', $1,
        tstzrange('2027-01-04 12:00+01', '2027-01-04 12:30+01'), true, true)`, agentNo)
	requireCode(t, err, "23503") // one resource's id with another's number

	// A worker of the previous release, still running during a rolling
	// deploy, writes occupancy without the number.
	_, err = conn.Exec(ctx, `
INSERT INTO booking_resource (booking_id, resource_id, occupied, live, exclusive)
VALUES ('00000000-0000-0000-0000-000000000002', 'paris', tstzrange('2027-01-04 14:00+01', '2027-01-04 14:30+01'), true, true)`)
	require.NoError(t, err)
	var filled int32
	require.NoError(t, conn.QueryRow(ctx, `
SELECT resource_no FROM booking_resource WHERE booking_id = '00000000-0000-0000-0000-000000000002'`).Scan(&filled))
	require.Equal(t, parisNo, filled)
}

// Occupancy rows carry no foreign keys (migration 004). The resources and
// bookings they name are guarded from the other side instead.
func TestOccupancyParentsAreGuardedWithoutForeignKeys(t *testing.T) {
	t.Parallel()
	ctx, conn := setup(t)
	require.NoError(t, schema.Migrate(ctx, conn))
	_, err := conn.Exec(ctx, `
INSERT INTO resource (resource_id, kind, capacity, time_zone) VALUES
    ('paris', 'property', 1, 'Europe/Paris'), ('agent', 'agent', 1, 'Europe/Paris'), ('spare', 'agent', 1, 'Europe/Paris');
INSERT INTO policy (version, slot_minutes, opens_at, closes_at, hold_ttl_seconds, is_current)
    VALUES ('p1', 30, '08:00', '20:00', 600, true);`)
	require.NoError(t, err)
	book := func(key string) {
		t.Helper()
		_, err := conn.Exec(ctx, `
WITH b AS (
    INSERT INTO booking (booking_id, request_key, status, property_id, agent_id, starts_at, ends_at, time_zone,
                         policy_version, intent_fingerprint)
    VALUES (gen_random_uuid(), $1, 'confirmed', 'paris', 'agent',
            '2027-01-04 09:00+01', '2027-01-04 09:30+01', 'Europe/Paris', 'p1', '\x00')
    RETURNING booking_id)
INSERT INTO booking_resource (booking_id, resource_id, resource_no, occupied, live, exclusive)
SELECT b.booking_id, r.resource_id, r.resource_no, tstzrange('2027-01-04 09:00+01', '2027-01-04 09:30+01'), true, true
FROM b, resource r WHERE r.resource_id IN ('paris', 'agent')`, key)
		require.NoError(t, err)
	}
	occupancy := func() int {
		t.Helper()
		var n int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM booking_resource").Scan(&n))
		return n
	}
	book("k")

	for _, stmt := range []string{
		"DELETE FROM resource WHERE resource_id = 'paris'",
		"DELETE FROM resource WHERE resource_id = 'spare'", // named by nothing, kept all the same
		"UPDATE resource SET resource_id = 'paris-2' WHERE resource_id = 'paris'",
		"UPDATE resource SET resource_no = DEFAULT WHERE resource_id = 'paris'",
	} {
		_, err = conn.Exec(ctx, stmt)
		requireCode(t, err, "23503")
	}
	_, err = conn.Exec(ctx, "UPDATE resource SET capacity = 1, time_zone = 'Europe/Paris' WHERE resource_id = 'paris'")
	require.NoError(t, err, "other columns stay editable")

	_, err = conn.Exec(ctx, "DELETE FROM booking WHERE request_key = 'k'")
	require.NoError(t, err)
	require.Zero(t, occupancy(), "a deleted booking takes its occupancy with it")

	book("k2")
	_, err = conn.Exec(ctx, "TRUNCATE booking CASCADE")
	require.NoError(t, err)
	require.Zero(t, occupancy(), "truncated bookings take their occupancy with them")
}

// A worker of the release before, restarted during a rollout, finds the
// schema a newer build migrated past what it knows. Migrations only add
// (expand, then contract a release later), so it runs on that schema; it
// must not try to migrate down, which fails on an irreversible migration
// and keeps the worker from starting.
func TestAnOlderBuildStartsOnANewerSchema(t *testing.T) {
	t.Parallel()
	ctx, conn := setup(t)
	require.NoError(t, schema.Migrate(ctx, conn))
	var newest int32
	require.NoError(t, conn.QueryRow(ctx, "SELECT version FROM bookingsaga_schema_version").Scan(&newest))
	_, err := conn.Exec(ctx, "UPDATE bookingsaga_schema_version SET version = version + 1")
	require.NoError(t, err)
	require.NoError(t, schema.Migrate(ctx, conn), "the newer schema stands")
	var now int32
	require.NoError(t, conn.QueryRow(ctx, "SELECT version FROM bookingsaga_schema_version").Scan(&now))
	require.Equal(t, newest+1, now)
}

// A volume made before the roles of their own: the operator creates the
// roles by hand on a schema already at the newest version, and the next
// `starter migrate` grants them their rights (docs/security.md).
func TestMigrateGrantsRolesMadeAfterTheSchema(t *testing.T) {
	t.Parallel()
	ctx, conn := setup(t)
	require.NoError(t, schema.Migrate(ctx, conn))
	_, err := conn.Exec(ctx, `DO $$ BEGIN CREATE ROLE bookingsaga_api; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`)
	require.NoError(t, err)
	require.NoError(t, schema.Migrate(ctx, conn), "nothing to migrate")
	var granted bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT has_table_privilege('bookingsaga_api', 'booking', 'SELECT')`).Scan(&granted))
	require.True(t, granted, "the role made after the schema was granted its rights")
}
