package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// This file is the one boundary where PostgreSQL errors become ours: lost
// races are retried here, and whatever still fails leaves as ErrContention
// or a plain wrapped error, never as a raw 23505, 23P01 or 40P01.

// ErrContention means the transaction kept losing races and gave up. It is
// technical and retryable with the same request_key.
var ErrContention = errors.New("booking store contention, retry with the same request_key")

// lostRace reports PostgreSQL errors that mean another transaction got there
// first; running the transaction again decides correctly from the new state.
func lostRace(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "23505", // unique_violation: a concurrent commit with the same request_key
		"23P01", // exclusion_violation: an overlapping live booking appeared
		"40P01", // deadlock_detected
		"40001": // serialization_failure
		return true
	}
	return false
}

// retry runs fn until it succeeds, fails for a reason other than a lost
// race, or runs out of attempts. op and key name the operation in errors.
func (s *Store) retry(ctx context.Context, op, key string, fn func(ctx context.Context) error) error {
	if key != "" {
		op += " " + key
	}
	var err error
	for attempt := 1; ; attempt++ {
		err = fn(ctx)
		if timedOut(err) {
			return fmt.Errorf("%s: %w", op, ErrTimeout)
		}
		if err == nil || !lostRace(err) {
			break
		}
		if attempt >= s.cfg.MaxAttempts {
			return fmt.Errorf("%s: %w (after %d attempts)", op, ErrContention, attempt)
		}
		// Jitter spreads the losers so they do not collide again in step.
		backoff := time.Duration(rand.Int64N(int64(attempt) * int64(2*time.Millisecond)))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case <-time.After(backoff):
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// ErrTimeout means the server gave up a statement at the end of its budget
// (statement_timeout or lock_timeout, or a cancel request): the
// transaction rolled back and nothing was written. It is technical, and
// retryable with the same request_key.
var ErrTimeout = errors.New("booking store did not decide within the attempt's budget; nothing was written")

// timedOut reports the errors of a statement the server ended early.
func timedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "57014" || pgErr.Code == "55P03") // query_canceled, lock_not_available
}

// budgetSQL bounds each following statement of the transaction, and each
// lock wait in it, by what is left of the caller's attempt. A commit the
// caller has given up on must not wait on a lock and commit later, behind
// the lookup that found the key absent. pgx sends a cancel request when
// the context ends too, but that needs a second connection to reach the
// server; the timeouts need nothing.
const budgetSQL = `SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $1, true),
    set_config('bookingsaga.agency', $2, true)`

// noDeadlineBudget bounds the statements of a caller that set no deadline.
const noDeadlineBudget = 30 * time.Second

// statementBudget is the server-side limit for ctx's remaining time: nine
// tenths of it, so the server gives up before the caller does.
func statementBudget(ctx context.Context) (string, error) {
	left := noDeadlineBudget
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl) * 9 / 10
	}
	if left < 10*time.Millisecond {
		return "", fmt.Errorf("%w (no time left)", ErrTimeout)
	}
	return fmt.Sprintf("%dms", left.Milliseconds()), nil
}
