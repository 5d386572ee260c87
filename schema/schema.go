// Package schema holds the booking store's migrations and applies them.
package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql after_rollout/*.sql
var migrations embed.FS

// versionTable records which migrations have run; afterTable which of
// the steps that wait for a rollout's end.
const (
	versionTable = "bookingsaga_schema_version"
	afterTable   = "bookingsaga_schema_after_rollout"
)

// Migrate brings the database up to the newest schema this build knows,
// and leaves a newer one as it is.
//
// tern rather than goose: it is pgx-native (no database/sql driver layer),
// reads plain SQL files from an fs.FS, and takes a PostgreSQL advisory lock,
// so several workers starting at once cannot run the same migration twice.
//
// A new store (version 0) also takes the steps that wait for a rollout's
// end (MigrateAfterRollout): no worker of an older build can be running
// on it.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	have, _, err := Versions(ctx, conn)
	if err != nil {
		return err
	}
	if err := MigrateTo(ctx, conn, -1); err != nil {
		return err
	}
	if have == 0 {
		return MigrateAfterRollout(ctx, conn)
	}
	return nil
}

// MigrateAfterRollout brings the database to the newest schema and then
// takes the contract steps (after_rollout/): those that drop what the
// build before this one still used. Run it once no worker of that build
// is left (starter migrate -after-rollout). Expand and contract: a
// migration only adds, and what it makes obsolete goes here, so a rollout
// runs old and new workers on one schema.
func MigrateAfterRollout(ctx context.Context, conn *pgx.Conn) error {
	if err := MigrateTo(ctx, conn, -1); err != nil {
		return err
	}
	m, err := migrator(ctx, conn, afterTable, "after_rollout")
	if err != nil {
		return err
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate after rollout: %w", err)
	}
	return nil
}

// migrator is tern's migrator over one directory of migrations.
func migrator(ctx context.Context, conn *pgx.Conn, table, dir string) (*migrate.Migrator, error) {
	m, err := migrate.NewMigrator(ctx, conn, table)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return nil, fmt.Errorf("migrate: load %s: %w", dir, err)
	}
	return m, nil
}

// MigrateTo brings the database to one migration's version (-1: the
// newest), so a rollout can stop at a known version and upgrades can be
// tested from the version before.
func MigrateTo(ctx context.Context, conn *pgx.Conn, version int32) error {
	m, err := migrator(ctx, conn, versionTable, "migrations")
	if err != nil {
		return err
	}
	if version < 0 {
		version = int32(len(m.Migrations))
		current, err := m.GetCurrentVersion(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if current >= version {
			// A newer build migrated further. Migrations only add (a
			// column or table goes a release after nothing reads it), so
			// this build runs on that schema; going down would fail on an
			// irreversible migration and keep it from starting. The
			// roles are granted still: an operator may have made them by
			// hand on a volume older than the init script's.
			return grantRoles(ctx, conn)
		}
	}
	if err := m.MigrateTo(ctx, version); err != nil {
		return fmt.Errorf("migrate to %d: %w", version, err)
	}
	return grantRoles(ctx, conn)
}

// Versions reports the schema's version and the one this build needs,
// reading the version table alone: a login that owns nothing may ask.
func Versions(ctx context.Context, conn *pgx.Conn) (have, want int32, err error) {
	entries, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return 0, 0, fmt.Errorf("schema versions: %w", err)
	}
	want = int32(len(entries))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, versionTable).Scan(&exists); err != nil || !exists {
		return 0, want, err
	}
	if err := conn.QueryRow(ctx, `SELECT version FROM `+versionTable).Scan(&have); err != nil {
		return 0, want, fmt.Errorf("schema versions: %w", err)
	}
	return have, want, nil
}

// grantRoles gives the worker's, the API's and the retention job's roles,
// those that exist, their rights on every table (migration 016).
func grantRoles(ctx context.Context, conn *pgx.Conn) error {
	// A block, not a plain SELECT: below version 16 the function does not
	// exist, and a plain call would not even parse.
	_, err := conn.Exec(ctx, `DO $$ BEGIN
    IF to_regproc('bookingsaga_grant_roles') IS NOT NULL THEN PERFORM bookingsaga_grant_roles(); END IF;
END $$`)
	if err != nil {
		return fmt.Errorf("migrate: grant roles: %w", err)
	}
	return nil
}
