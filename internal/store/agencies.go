package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// The agencies of a deployment: made and named by a platform key, never
// deleted (an agency that leaves has its data erased, and its number is
// not given again). The agency table is the one table every login reads
// whole: it is no agency's data.

// FindAgency is the agency of id; booking.ErrNotFound when there is none.
func (s *Store) FindAgency(ctx context.Context, id string) (agency.Agency, error) {
	a := agency.Agency{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT agency_no FROM agency WHERE agency_id = $1`, id).Scan(&a.No)
	if errors.Is(err, pgx.ErrNoRows) {
		return agency.Agency{}, fmt.Errorf("agency %s: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return agency.Agency{}, fmt.Errorf("agency %s: %w", id, err)
	}
	return a, nil
}

// PutAgency makes the agency id, or names it anew; created says which.
func (s *Store) PutAgency(ctx context.Context, id, name string) (a agency.Agency, created bool, err error) {
	if err := agency.ValidID(id); err != nil {
		return agency.Agency{}, false, booking.Rejectf(booking.CodeInvalidAgency, "%v", err)
	}
	if len(name) > maxAgencyName {
		return agency.Agency{}, false, booking.Rejectf(booking.CodeInvalidAgency, "an agency's name is at most %d bytes, got %d", maxAgencyName, len(name))
	}
	a.ID = id
	// xmax = 0 only on a row this statement inserted.
	err = s.pool.QueryRow(ctx, `INSERT INTO agency (agency_id, name) VALUES ($1, $2)
ON CONFLICT (agency_id) DO UPDATE SET name = EXCLUDED.name RETURNING agency_no, xmax = 0`, id, name).Scan(&a.No, &created)
	if err != nil {
		return agency.Agency{}, false, fmt.Errorf("put agency %s: %w", id, err)
	}
	return a, created, nil
}

// maxAgencyName is the agency table's bound on a name.
const maxAgencyName = 200

// Agencies are the deployment's agencies, by number, with their names.
func (s *Store) Agencies(ctx context.Context) ([]agency.Named, error) {
	rows, err := s.pool.Query(ctx, `SELECT agency_no, agency_id, name FROM agency ORDER BY agency_no`)
	if err != nil {
		return nil, fmt.Errorf("agencies: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (agency.Named, error) {
		var n agency.Named
		return n, r.Scan(&n.No, &n.ID, &n.Name)
	})
	if err != nil {
		return nil, fmt.Errorf("agencies: %w", err)
	}
	return out, nil
}
