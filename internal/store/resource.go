package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/internal/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Resource is anything a viewing occupies: a property, an agent, a key holder.
type Resource struct {
	ID                  string `json:"id"`
	Kind                string `json:"kind"`
	Capacity            int    `json:"capacity"`
	TimeZone            string `json:"time_zone"`
	BufferBeforeMinutes int    `json:"buffer_before_minutes"`
	BufferAfterMinutes  int    `json:"buffer_after_minutes"`
	CalendarID          string `json:"calendar_id,omitempty"`
}

// knownKind reports the kinds of resource a booking can use.
func knownKind(kind string) bool {
	switch kind {
	case "property", "agent", "key_holder", "room", "other":
		return true
	}
	return false
}

func (r Resource) validate() error {
	switch {
	case r.ID == "" || len(r.ID) > booking.MaxKeyLength:
		return booking.Rejectf(booking.CodeInvalidResource, "id must be 1 to %d characters", booking.MaxKeyLength)
	case !knownKind(r.Kind):
		return booking.Rejectf(booking.CodeInvalidResource, "kind %q is not one of property, agent, key_holder, room, other", r.Kind)
	case r.Capacity < 1:
		return booking.Rejectf(booking.CodeInvalidResource, "capacity must be at least 1, got %d", r.Capacity)
	case r.BufferBeforeMinutes < 0 || r.BufferBeforeMinutes > 1440 || r.BufferAfterMinutes < 0 || r.BufferAfterMinutes > 1440:
		return booking.Rejectf(booking.CodeInvalidResource, "buffers must be 0 to 1440 minutes")
	}
	if _, err := localtime.LoadZone(r.TimeZone); err != nil {
		return booking.Rejectf(booking.CodeUnknownTimeZone, "time_zone %q is not an IANA zone", r.TimeZone)
	}
	return nil
}

// UpsertResource creates or replaces a resource. Lowering capacity below
// what live bookings already use is refused rather than silently
// overbooking. New buffers apply to new bookings; live ones keep the range
// they were committed with.
func (s *Store) UpsertResource(ctx context.Context, r Resource) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("upsert resource %s: %w", r.ID, err)
	}
	return s.retry(ctx, "upsert resource", r.ID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return upsertResource(ctx, tx, r) })
	})
}

func upsertResource(ctx context.Context, tx pgx.Tx, r Resource) error {
	// The row lock this upsert takes is the one commits take, so no commit
	// for this resource runs between the check below and our commit.
	_, err := tx.Exec(ctx, `
INSERT INTO resource (resource_id, kind, capacity, time_zone, buffer_before_minutes, buffer_after_minutes, calendar_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (resource_id) DO UPDATE SET kind = excluded.kind, capacity = excluded.capacity,
    time_zone = excluded.time_zone, buffer_before_minutes = excluded.buffer_before_minutes,
    buffer_after_minutes = excluded.buffer_after_minutes, calendar_id = excluded.calendar_id, updated_at = now()`,
		r.ID, r.Kind, r.Capacity, r.TimeZone, r.BufferBeforeMinutes, r.BufferAfterMinutes, nullable(r.CalendarID))
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT lower(occupied), upper(occupied) FROM booking_resource WHERE resource_id = $1 AND live`, r.ID)
	if err != nil {
		return err
	}
	live, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (span, error) {
		var s span
		return s, row.Scan(&s.Start, &s.End)
	})
	if err != nil {
		return err
	}
	everything := span{Start: time.Unix(0, 0), End: time.Unix(1<<40, 0)}
	if n, where := peak(everything, live); n > r.Capacity {
		return booking.Rejectf(booking.CodeCapacityBelowBookings,
			"resource %s has %d live bookings at once around %s; cancel some before lowering capacity to %d",
			r.ID, n, where.Start.Format(time.RFC3339), r.Capacity)
	}
	_, err = tx.Exec(ctx, `UPDATE booking_resource SET exclusive = $2 WHERE resource_id = $1 AND live AND exclusive <> $2`,
		r.ID, r.Capacity == 1)
	return err
}

// Resource returns one resource.
func (s *Store) Resource(ctx context.Context, id string) (Resource, error) {
	var r Resource
	var cal *string
	err := s.pool.QueryRow(ctx, `
SELECT resource_id, kind, capacity, time_zone, buffer_before_minutes, buffer_after_minutes, calendar_id
FROM resource WHERE resource_id = $1`, id).Scan(&r.ID, &r.Kind, &r.Capacity, &r.TimeZone,
		&r.BufferBeforeMinutes, &r.BufferAfterMinutes, &cal)
	if errors.Is(err, pgx.ErrNoRows) {
		return Resource{}, fmt.Errorf("resource %s: %w", id, booking.Rejectf(booking.CodeUnknownResource, "unknown resource %s", id))
	}
	if err != nil {
		return Resource{}, fmt.Errorf("resource %s: %w", id, err)
	}
	if cal != nil {
		r.CalendarID = *cal
	}
	return r, nil
}
