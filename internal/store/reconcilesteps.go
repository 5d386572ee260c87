package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// NoteReconcile records how each step of a reconciliation run ended: a
// failure is kept (since its first) until a run gets the step through.
func (s *Store) NoteReconcile(ctx context.Context, steps []booking.StepOutcome) error {
	err := s.retry(ctx, "note reconcile", "", func(ctx context.Context) error {
		b := &pgx.Batch{}
		now := s.now()
		for _, st := range steps {
			if st.Error == "" {
				b.Queue(`DELETE FROM reconcile_failure WHERE step = $1`, st.Step)
				continue
			}
			b.Queue(`INSERT INTO reconcile_failure (step, error, since, last) VALUES ($1, $2, $3, $3)
ON CONFLICT (agency_no, step) DO UPDATE SET error = EXCLUDED.error, last = EXCLUDED.last`, st.Step, st.Error, now)
		}
		return s.pool.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("note reconcile: %w", err)
	}
	return nil
}

// ReconcileFailures are the steps whose last run failed, oldest first.
func (s *Store) ReconcileFailures(ctx context.Context) ([]booking.StepFailure, error) {
	var out []booking.StepFailure
	err := s.retry(ctx, "reconcile failures", "", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT step, error, since, last FROM reconcile_failure ORDER BY since, step`)
		if err == nil {
			out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[booking.StepFailure])
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile failures: %w", err)
	}
	return out, nil
}
