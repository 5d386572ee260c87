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

//go:embed migrations/*.sql
var migrations embed.FS

// versionTable records which migrations have run.
const versionTable = "bookingsaga_schema_version"

// Migrate brings the database up to the newest schema.
//
// tern rather than goose: it is pgx-native (no database/sql driver layer),
// reads plain SQL files from an fs.FS, and takes a PostgreSQL advisory lock,
// so several workers starting at once cannot run the same migration twice.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	m, err := migrate.NewMigrator(ctx, conn, versionTable)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("migrate: load: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
