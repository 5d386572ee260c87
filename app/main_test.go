package app

import (
	"testing"

	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// TestMain gives the wiring's own tests a throwaway PostgreSQL cluster
// (the reads' pool sizing); the system tests are in systemtest.
func TestMain(m *testing.M) { pgtest.Main(m) }
