//go:build nodev

package app

import (
	"context"
	"errors"

	"go.uber.org/zap"
)

// RunDev is not in a production build (-tags nodev, as the Dockerfile
// builds): the embedded Temporal server, its UI and SQLite are left out,
// which makes the worker several times smaller.
func RunDev(context.Context, Config, *zap.Logger) error {
	return errors.New("this worker was built without the dev stack (-tags nodev): run `go run ./worker -dev` from a clone, or give it a Temporal and a PostgreSQL (-database-url)")
}
