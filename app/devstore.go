package app

import (
	"path/filepath"

	"github.com/bookingsaga/bookingsaga/internal/pgserver"
)

// devDatabase is the dev stack's store, in the cluster of devStoreDir. It
// stands apart from dev.go so that the CLI finds it in a build without
// the dev stack too.
const devDatabase = "bookingsaga"

func devStoreDir(dataDir string) string { return filepath.Join(dataDir, "postgres") }

// DevDatabaseURL is the store of the dev stack running from dataDir,
// wherever its cluster lives; an error when none runs there.
func DevDatabaseURL(dataDir string) (string, error) {
	return pgserver.Running(devStoreDir(dataDir), devDatabase)
}
