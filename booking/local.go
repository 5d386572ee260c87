package booking

import (
	"time"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// LocalStart is the instant of a local wall time (YYYY-MM-DDTHH:MM) in an
// IANA zone, by the zone rules the service itself uses (ZoneRules), not
// the host's: an agent backend that builds an Intent from what the caller
// said gets the instant the service will read back to the caller. A time
// that daylight-saving time skips or repeats is an error to ask about.
func LocalStart(local, zone string) (time.Time, error) { return localtime.Parse(local, zone) }

// ZoneRules is the IANA release of those rules, e.g. "2026c".
func ZoneRules() string { return localtime.Version() }

// ZoneRulesReport is one pass over future bookings under the zone rules
// in use: how many were checked, moved to keep the local time they
// promised, and flagged because they could not follow.
type ZoneRulesReport struct {
	Checked, Moved, Flagged int
	Details                 []string
}
