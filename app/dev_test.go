//go:build !nodev

package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func setupDev(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	require.NoError(t, devCodec(&cfg))
	return cfg
}

// The dev stack listens on a dozen addresses by default: no two may be the
// same, or `go run ./worker -dev` stops at the second with "address
// already in use".
func TestTheDevStacksDefaultAddressesDiffer(t *testing.T) {
	t.Parallel()
	require.NoError(t, devAddresses(setupDev(t)))
}

func TestTwoDevListenersOnOneAddressAreRefusedByName(t *testing.T) {
	t.Parallel()
	cfg := setupDev(t)
	cfg.HubSpotListen = cfg.APIListen
	require.EqualError(t, devAddresses(cfg), "-api-listen and -fake-hubspot are both 127.0.0.1:8080: give one another address")
}
