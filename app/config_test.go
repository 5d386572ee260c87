package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionsMustNotShrinkAlongTheChain(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	for _, tc := range []struct {
		contact, booking, event time.Duration
		bad                     bool
	}{
		{90 * day, 730 * day, 2190 * day, false},
		{90 * day, 90 * day, 90 * day, false},
		{90 * day, 30 * day, 2190 * day, true},
		{90 * day, 730 * day, 365 * day, true},
		{90 * day, 0, 2190 * day, true},
	} {
		cfg := DefaultConfig()
		cfg.DatabaseURL = "postgres://localhost/x"
		cfg.ContactRetention, cfg.BookingRetention, cfg.EventRetention = tc.contact, tc.booking, tc.event
		err := cfg.Validate()
		if tc.bad {
			require.ErrorContains(t, err, "retention", "%+v", tc)
		} else {
			require.NoError(t, err, "%+v", tc)
		}
	}
}

// A mirror's yield stays within the first try that holds it, and the
// calendar re-check within a quarter of the commit's wait.
func TestTheMirrorsTimingsStayWithinTheirBounds(t *testing.T) {
	t.Parallel()
	yield := func(c *Config, d time.Duration) { c.MirrorYield = d }
	recheck := func(c *Config, d time.Duration) { c.CalendarRecheck = d }
	for _, tc := range []struct {
		flag string
		set  func(*Config, time.Duration)
		d    time.Duration
		bad  bool
	}{
		{"mirror-yield", yield, 0, false}, {"mirror-yield", yield, 250 * time.Millisecond, false}, {"mirror-yield", yield, time.Second, false},
		{"mirror-yield", yield, -time.Millisecond, true}, {"mirror-yield", yield, 2 * time.Second, true},
		{"calendar-recheck", recheck, 10 * time.Millisecond, false}, {"calendar-recheck", recheck, 750 * time.Millisecond, false},
		{"calendar-recheck", recheck, 0, true}, {"calendar-recheck", recheck, time.Second, true},
	} {
		cfg := DefaultConfig()
		cfg.DatabaseURL = "postgres://localhost/x"
		tc.set(&cfg, tc.d)
		err := cfg.Validate()
		if tc.bad {
			require.ErrorContains(t, err, tc.flag, "%s", tc.d)
		} else {
			require.NoError(t, err, "%s %s", tc.flag, tc.d)
		}
	}
}

// Reconciliation resends pending calls, repairs messages and erases
// contacts at retention besides repairing the mirrors: a worker that
// would never schedule it is refused, with how to pause the repairs.
func TestReconciliationCannotBeTurnedOff(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.DatabaseURL = "postgres://localhost/x"
	cfg.ReconcileInterval = 0
	require.EqualError(t, cfg.Validate(), "reconcile-every must be positive, got 0s: reconciliation also resends pending calls, "+
		"repairs callers' messages and erases contacts at retention (pause its schedule in the Temporal UI to hold repairs)")
	cfg.ReconcileInterval = time.Hour
	require.NoError(t, cfg.Validate())
}

// A rate with no burst would refuse every call: the API refuses to start
// with one, naming both bursts.
func TestARateLimitNeedsABurst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		burst, agencyBurst int
		bad                bool
	}{{100, 400, false}, {0, 400, true}, {100, 0, true}} {
		cfg := DefaultAPIConfig()
		cfg.DatabaseURL, cfg.KeysFile = "postgres://localhost/x", "keys.json"
		cfg.Limits.Burst, cfg.Limits.AgencyBurst = tc.burst, tc.agencyBurst
		err := cfg.Validate()
		if tc.bad {
			require.ErrorContains(t, err, "agency-rate-burst must be 1 or more", "%+v", tc)
		} else {
			require.NoError(t, err, "%+v", tc)
		}
	}
}
