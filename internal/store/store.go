// Package store is the authoritative booking store on PostgreSQL. A booking
// exists when this package has committed it; every other system mirrors it.
//
// Each operation is one transaction. Commits serialise per resource by
// locking the resource rows in a fixed order, then decide capacity from a
// snapshot taken after the locks, so two requests for the same resource are
// always decided one after the other.
package store

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Config tunes a Store. The zero value is usable.
type Config struct {
	// Now is the store's clock for notice, holds and timestamps.
	Now func() time.Time
	// ContactRetention is how long contact details are kept after the
	// viewing ends.
	ContactRetention time.Duration
	// BookingRetention is how long after its viewing ends a booking keeps
	// its request key (and a refusal its row); then it is anonymised.
	BookingRetention time.Duration
	// EventRetention is how long the event log keeps a row; it must not
	// be shorter than BookingRetention (the log deletes anonymised rows
	// only).
	EventRetention time.Duration
	// MaxAttempts bounds retries of a transaction that lost a race
	// (unique or exclusion violation, deadlock, serialization failure).
	MaxAttempts int
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ContactRetention == 0 {
		c.ContactRetention = 30 * 24 * time.Hour
	}
	if c.BookingRetention == 0 {
		c.BookingRetention = 2 * 365 * 24 * time.Hour
	}
	if c.EventRetention == 0 {
		c.EventRetention = max(6*365*24*time.Hour, c.BookingRetention)
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 5
	}
	return c
}

// Store reads and writes bookings.
type Store struct {
	// pool names each statement's agency (agency.go).
	pool  db
	cfg   Config
	ruled ruledCache
	// lookup is the caller-ID digest key, read once (callerid.go).
	lookup lookupKeys
	// secrets are the agencies' platform secrets read lately
	// (platformsecrets.go).
	secrets secretCache
}

// New returns a Store over pool.
func New(pool *pgxpool.Pool, cfg Config) *Store {
	return &Store{pool: db{pool}, cfg: cfg.withDefaults()}
}

// now reads the clock at the database's precision, in UTC.
func (s *Store) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

const bookingColumns = `booking_id, request_key, status, property_id, agent_id, extra_resource_ids,
	starts_at, ends_at, time_zone, coalesce(replaces_request_key, ''), policy_version, intent_fingerprint,
	hold_expires_at, coalesce(provider_event_id, ''), coalesce(crm_ref, ''),
	coalesce(replaced_by_request_key, ''), created_at, committed_at, released_at, coalesce(agent_pool_id, ''),
	coalesce(local_start, ''), coalesce(zone_rules, ''), remind_at, coalesce(outcome, ''), reconfirmed_at`

// scanBooking reads bookingColumns, returning the stored fingerprint too.
func scanBooking(row pgx.Row) (booking.Booking, []byte, error) {
	var b booking.Booking
	var fp []byte
	err := row.Scan(&b.BookingID, &b.RequestKey, &b.Status, &b.Intent.PropertyID, &b.Intent.AgentID,
		&b.Intent.ExtraResources, &b.Intent.StartsAt, &b.Intent.EndsAt, &b.Intent.TimeZone,
		&b.Intent.Replaces, &b.PolicyVersion, &fp, &b.HoldExpiresAt, &b.ProviderEventID, &b.CRMRef,
		&b.ReplacedByRequestKey, &b.CreatedAt, &b.CommittedAt, &b.ReleasedAt, &b.Intent.AgentPool, &b.LocalStart, &b.ZoneRules, &b.RemindAt,
		&b.Outcome, &b.ReconfirmedAt)
	if len(b.Intent.ExtraResources) == 0 {
		b.Intent.ExtraResources = nil
	}
	b.Intent = b.Intent.Normalize()
	b.CreatedAt = b.CreatedAt.UTC()
	for _, t := range []*time.Time{b.HoldExpiresAt, b.CommittedAt, b.ReleasedAt, b.RemindAt, b.ReconfirmedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return b, fp, err
}

// PoolConfig is the configuration of a pool to the store at url, as every
// process opens it: with PostgreSQL's JIT compilation off. The store's
// statements run in a millisecond or two, but the planner prices a
// generic plan over small tables it has never analysed (a policy table of
// a few rows estimated at 345) above jit_above_cost, and compiling then
// costs 15 ms of every execution: the commit's occupancy read ran 45 ms a
// call at 20 bookings a second with it, under 1 ms without
// (BENCHMARKS.md, statements per booking).
func PoolConfig(url string) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if _, set := pc.ConnConfig.RuntimeParams["jit"]; !set {
		pc.ConnConfig.RuntimeParams["jit"] = "off"
	}
	return pc, nil
}
