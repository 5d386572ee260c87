package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// SpendFindAttempt spends one of ref's find_booking attempts (migration
// 021) and reports whether one was left: at most limit in each window of
// length per, counted for every API process alike. ref is the canonical
// reference; the store keeps its hash alone.
func (s *Store) SpendFindAttempt(ctx context.Context, ref string, limit int, per time.Duration) (bool, error) {
	sum := sha256.Sum256([]byte("find_booking\n" + ref))
	var attempts int
	err := s.retry(ctx, "spend find attempt", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, spendFindSQL, sum[:], s.now(), per.Seconds()).Scan(&attempts)
	})
	if err != nil {
		return false, fmt.Errorf("spend find attempt: %w", err)
	}
	return attempts <= limit, nil
}

// spendFindSQL counts one attempt in the reference's window, or opens a
// new window when the last one is over.
const spendFindSQL = `
INSERT INTO find_attempt AS f (reference_hash, window_start, attempts) VALUES ($1, $2, 1)
ON CONFLICT (agency_no, reference_hash) DO UPDATE SET
    window_start = CASE WHEN f.window_start <= $2 - make_interval(secs => $3) THEN $2 ELSE f.window_start END,
    attempts     = CASE WHEN f.window_start <= $2 - make_interval(secs => $3) THEN 1 ELSE f.attempts + 1 END
RETURNING attempts`

// findAttemptRetention is how long a window's count is kept; the windows
// are an hour.
const findAttemptRetention = 24 * time.Hour
