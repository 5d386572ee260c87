package main

import (
	"bytes"
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Reads of the store are answered with no Temporal at all: an operator
// listing a day's bookings during a Temporal outage still gets them.
func TestStoreReadsNeedNoTemporal(t *testing.T) {
	t.Parallel()
	_, url := pgtest.NewWithURL(t)
	nobody, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := nobody.Addr().String()
	require.NoError(t, nobody.Close())
	var out bytes.Buffer
	err = run(context.Background(), []string{"-temporal-address", dead, "-database-url", url,
		"bookings", "-zone", "Europe/Paris", "-day", "2026-12-01"}, &out)
	require.NoError(t, err)
	require.Equal(t, "No bookings.\n", out.String())
}
