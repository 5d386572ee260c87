package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// UpsertResource creates or replaces a resource. Lowering capacity below
// what live bookings already use is refused rather than silently
// overbooking. New buffers apply to new bookings; live ones keep the range
// they were committed with.
func (s *Store) UpsertResource(ctx context.Context, r booking.Resource) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("upsert resource %s: %w", r.ID, err)
	}
	defer s.ruled.forget()
	return s.retry(ctx, "upsert resource", r.ID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return upsertResource(ctx, tx, r) })
	})
}

func upsertResource(ctx context.Context, tx pgx.Tx, r booking.Resource) error {
	if r.CalendarID != "" && r.CalendarProvider == "" {
		// Left out, the provider of the same calendar stays: a client
		// that predates calendar_provider must not move a Microsoft
		// mailbox to Google. A new calendar id defaults (Resource.Provider).
		err := tx.QueryRow(ctx, `SELECT calendar_provider FROM resource WHERE resource_id = $1 AND calendar_id = $2 FOR NO KEY UPDATE`,
			r.ID, r.CalendarID).Scan(&r.CalendarProvider)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
	}
	// The row lock this upsert takes is the one commits take, so no commit
	// for this resource runs between the check below and our commit.
	_, err := tx.Exec(ctx, `
INSERT INTO resource (resource_id, kind, capacity, time_zone, buffer_before_minutes, buffer_after_minutes, calendar_id, display_name, rules,
    calendar_provider, facts, display_names, crm, address, addresses)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (agency_no, resource_id) DO UPDATE SET kind = excluded.kind, capacity = excluded.capacity,
    time_zone = excluded.time_zone, buffer_before_minutes = excluded.buffer_before_minutes,
    buffer_after_minutes = excluded.buffer_after_minutes, calendar_id = excluded.calendar_id,
    display_name = excluded.display_name, rules = excluded.rules, calendar_provider = excluded.calendar_provider,
    facts = excluded.facts, display_names = excluded.display_names, crm = excluded.crm, address = excluded.address,
    addresses = excluded.addresses, updated_at = now()`,
		r.ID, r.Kind, r.Capacity, r.TimeZone, r.BufferBeforeMinutes, r.BufferAfterMinutes, nullable(r.CalendarID), nullable(r.DisplayName),
		rulesValue(r.Rules), nullable(r.Provider()), factsValue(r.Facts), namesValue(r.DisplayNames), nullable(r.CRM),
		nullable(r.Address), namesValue(r.Addresses))
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `
SELECT lower(occupied), upper(occupied) FROM booking_resource
WHERE resource_no = (SELECT resource_no FROM resource WHERE resource_id = $1) AND live`, r.ID)
	if err != nil {
		return err
	}
	live, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (booking.Span, error) {
		var s booking.Span
		return s, row.Scan(&s.Start, &s.End)
	})
	if err != nil {
		return err
	}
	everything := booking.Span{Start: time.Unix(0, 0), End: time.Unix(1<<40, 0)}
	if n, where := peak(everything, live); n > r.Capacity {
		return booking.Rejectf(booking.CodeCapacityBelowBookings,
			"resource %s has %d live bookings at once around %s; cancel some before lowering capacity to %d",
			r.ID, n, where.Start.Format(time.RFC3339), r.Capacity)
	}
	_, err = tx.Exec(ctx, `
UPDATE booking_resource SET exclusive = $2
WHERE resource_no = (SELECT resource_no FROM resource WHERE resource_id = $1) AND live AND exclusive <> $2`,
		r.ID, r.Capacity == 1)
	return err
}

// namesValue is what the display_names column holds: NULL for none.
func namesValue(n map[string]string) map[string]string {
	if len(n) == 0 {
		return nil
	}
	return n
}

// factsValue is what the facts column holds: NULL for none.
func factsValue(f []booking.Fact) []booking.Fact {
	if len(f) == 0 {
		return nil
	}
	return f
}

// rulesValue is what the rules column holds: NULL for none, so that the
// fast path sees at a glance which resources have rules of their own.
func rulesValue(r *booking.Rules) *booking.Rules {
	if r.Empty() {
		return nil
	}
	return r
}

// Resource returns one resource.
func (s *Store) Resource(ctx context.Context, id string) (booking.Resource, error) {
	var r booking.Resource
	var cal, name *string
	err := s.pool.QueryRow(ctx, `
SELECT resource_id, kind, capacity, time_zone, buffer_before_minutes, buffer_after_minutes, calendar_id,
       coalesce(calendar_provider, ''), display_name, rules, facts, display_names, coalesce(crm, ''), coalesce(address, ''), addresses
FROM resource WHERE resource_id = $1`, id).Scan(&r.ID, &r.Kind, &r.Capacity, &r.TimeZone,
		&r.BufferBeforeMinutes, &r.BufferAfterMinutes, &cal, &r.CalendarProvider, &name, &r.Rules, &r.Facts, &r.DisplayNames, &r.CRM,
		&r.Address, &r.Addresses)
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Resource{}, fmt.Errorf("resource %s: %w", id, booking.Rejectf(booking.CodeUnknownResource, "unknown resource %s", id))
	}
	if err != nil {
		return booking.Resource{}, fmt.Errorf("resource %s: %w", id, err)
	}
	r.CalendarID, r.DisplayName = deref(cal), deref(name)
	return r, nil
}

// AllDisplayNames reads every resource's names as the spoken lines read
// them (booking.Resource.SpokenNames), for their cache (the catalogue is
// small: one row per resource).
func (s *Store) AllDisplayNames(ctx context.Context) (map[string]map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT resource_id, display_name, display_names FROM resource
WHERE display_name IS NOT NULL OR display_names IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("display names: %w", err)
	}
	out := map[string]map[string]string{}
	var r booking.Resource
	var name *string
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &name, &r.DisplayNames}, func() error {
		r.DisplayName = deref(name)
		out[r.ID] = r.SpokenNames()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("display names: %w", err)
	}
	return out, nil
}

// CalendarWatch returns, in one round trip, the resources among ids whose
// calendars a commit re-checks (capacity 1, with a calendar), each with the
// times over [from, to) of its bookings that may have an event of ours
// there: the live ones, and those released in the last hour whose event the
// saga may not have removed yet. An old cancellation's time is not listed,
// so an event someone typed in there later is still seen.
func (s *Store) CalendarWatch(ctx context.Context, ids []string, from, to time.Time) ([]booking.WatchedResource, error) {
	rows, err := s.pool.Query(ctx, `
SELECT r.resource_id, r.kind, r.capacity, r.time_zone, rb.before_minutes, rb.after_minutes, r.calendar_id, r.calendar_provider,
       coalesce(array_agg(b.starts_at ORDER BY b.starts_at) FILTER (WHERE b.booking_id IS NOT NULL), '{}'),
       coalesce(array_agg(b.ends_at ORDER BY b.starts_at) FILTER (WHERE b.booking_id IS NOT NULL), '{}')
FROM resource r JOIN resource_buffers rb USING (resource_id)
LEFT JOIN booking b ON b.starts_at < $3 AND b.starts_at > $2::timestamptz - $4::interval AND b.ends_at > $2
  AND (b.property_id = r.resource_id OR b.agent_id = r.resource_id OR r.resource_id = ANY(b.extra_resource_ids))
  AND (b.status IN ('held', 'confirmed') OR b.released_at > $5::timestamptz - interval '1 hour')
WHERE r.resource_id = ANY($1) AND r.capacity = 1 AND r.calendar_id IS NOT NULL
GROUP BY r.agency_no, r.resource_id, rb.before_minutes, rb.after_minutes ORDER BY r.resource_id`, ids, from, to, booking.MaxDuration, s.now())
	if err != nil {
		return nil, fmt.Errorf("calendar watch: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (booking.WatchedResource, error) {
		var w booking.WatchedResource
		var starts, ends []time.Time
		err := row.Scan(&w.ID, &w.Kind, &w.Capacity, &w.TimeZone, &w.BufferBeforeMinutes, &w.BufferAfterMinutes,
			&w.CalendarID, &w.CalendarProvider, &starts, &ends)
		for i := range starts {
			w.Ours = append(w.Ours, booking.Span{Start: starts[i], End: ends[i]})
		}
		return w, err
	})
}

// CalendarResources lists every resource with a calendar. The buffers are
// the effective ones (resource_buffers: the larger of their own and the
// policy's), which is what a booking occupies, so the commit's calendar
// re-check looks as far as the store.
func (s *Store) CalendarResources(ctx context.Context) ([]booking.Resource, error) {
	rows, err := s.pool.Query(ctx, `
SELECT r.resource_id, r.kind, r.capacity, r.time_zone, rb.before_minutes, rb.after_minutes, r.calendar_id,
       r.calendar_provider, coalesce(r.display_name, ''), r.display_names, coalesce(r.address, ''), r.addresses, r.rules, r.facts,
       coalesce(r.crm, '')
FROM resource r JOIN resource_buffers rb USING (resource_id)
WHERE r.calendar_id IS NOT NULL ORDER BY r.resource_id`)
	if err != nil {
		return nil, fmt.Errorf("calendar resources: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[booking.Resource])
}

// PropertyZones are the time zones of the agency's properties, each once:
// where its callers are, by default, texted.
func (s *Store) PropertyZones(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT time_zone FROM resource WHERE kind = 'property' ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("property zones: %w", err)
	}
	zones, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("property zones: %w", err)
	}
	return zones, nil
}
