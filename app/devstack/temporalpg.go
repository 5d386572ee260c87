package devstack

import (
	"context"
	"fmt"

	"go.temporal.io/server/common/config"
	serverlog "go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // registers postgres12_pgx
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// The embedded Temporal server can keep its persistence and visibility in
// the dev stack's own PostgreSQL cluster, as docker-compose's Temporal
// does, instead of SQLite's single writer: two databases beside the
// store's, their schema made, or brought up to date, from the schema
// files the server embeds.

// Temporal stores.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// PostgresTemporal is where the server's databases are: a cluster reached
// over its unix socket in SocketDir, as the postgres user.
type PostgresTemporal struct {
	SocketDir string
	// Admin is a connection string to the cluster's postgres database,
	// which the server's two databases are created from.
	Admin string
}

const (
	temporalDatabase   = "temporal"
	visibilityDatabase = "temporal_visibility"
	postgresPlugin     = "postgres12_pgx"
	// temporalShards: a shard serialises the writes of its workflows;
	// several let bookings on two cores commit side by side.
	temporalShards = 4
)

// postgresStores makes (or updates) the two databases and returns their
// configuration.
func postgresStores(ctx context.Context, p PostgresTemporal) (persistence, visibility *config.SQL, err error) {
	for _, db := range []struct {
		name, schema, version string
		out                   **config.SQL
	}{
		{temporalDatabase, "postgresql/v12/temporal", pgschema.Version, &persistence},
		{visibilityDatabase, "postgresql/v12/visibility", pgschema.VisibilityVersion, &visibility},
	} {
		if _, err := CreateDatabase(ctx, p.Admin, db.name, "postgres"); err != nil {
			return nil, nil, err
		}
		conf := &config.SQL{PluginName: postgresPlugin, DatabaseName: db.name, ConnectAddr: "localhost:5432", ConnectProtocol: "tcp",
			User: "postgres", MaxConns: 20, MaxIdleConns: 20,
			// pgx takes a host parameter that names a socket directory over
			// the URL's host, so the server reaches the cluster as the
			// store does, with no TCP listener.
			ConnectAttributes: map[string]string{"host": p.SocketDir, "sslmode": "disable"}}
		if err := temporalSchema(conf, db.schema, db.version); err != nil {
			return nil, nil, fmt.Errorf("temporal schema %s: %w", db.name, err)
		}
		*db.out = conf
	}
	return persistence, visibility, nil
}

// temporalSchema sets the schema up on an empty database, or updates it
// to the server's version.
func temporalSchema(conf *config.SQL, name, version string) error {
	logger := serverlog.NewNoopLogger()
	conn, err := sqltool.NewConnection(conf, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	current, err := conn.ReadSchemaVersion()
	if err != nil || current == "" {
		return schema.NewSetupSchemaTask(conn, &schema.SetupConfig{SchemaName: name, InitialVersion: version}, logger).Run()
	}
	return schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: conf.DatabaseName, SchemaName: name}, logger).Run()
}
