package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/agency"
)

// Agencies: every row of an agency's data carries its agency_no, and
// row-level security (migration 037) shows a transaction only the rows of
// the agency it names in bookingsaga.agency. The store names it on every
// statement, from the context (agency.With; the default agency when
// none), so a query that forgets its agency finds nothing of another's.

// agencyOf is the number of the agency ctx acts for, as the setting takes it.
func agencyOf(ctx context.Context) string { return strconv.Itoa(agency.From(ctx).No) }

// agencySQL names the transaction's agency.
const agencySQL = `SELECT set_config('bookingsaga.agency', $1, true)`

// db is the pool as the store uses it: each statement runs in the agency
// of its context. A statement outside a transaction goes in one batch
// after the setting (one round trip; the batch is one implicit
// transaction, so the setting ends with it); a transaction names it first.
type db struct{ pool *pgxpool.Pool }

func (d db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br := d.batch(ctx, sql, args...)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (d db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br := d.batch(ctx, sql, args...)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (d db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	br := d.batch(ctx, sql, args...)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// SendBatch sends b after the agency's setting, whose result it reads:
// the caller reads b's as if b were alone. (Were the setting to fail,
// every statement after it in the batch fails too.)
func (d db) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	named := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: agencySQL, Arguments: []any{agencyOf(ctx)}}}, b.QueuedQueries...)}
	br := d.pool.SendBatch(ctx, named)
	_, _ = br.Exec()
	return br
}

// Begin starts a transaction in ctx's agency (pgx.BeginFunc takes db).
func (d db) Begin(ctx context.Context) (pgx.Tx, error) { return d.BeginTx(ctx, pgx.TxOptions{}) }

// BeginTx is Begin with options.
func (d db) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, agencySQL, agencyOf(ctx)); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

func (d db) batch(ctx context.Context, sql string, args ...any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.Queue(agencySQL, agencyOf(ctx))
	b.Queue(sql, args...)
	return d.pool.SendBatch(ctx, b)
}

// batchRow is a row read from a batch, which it closes once scanned.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// batchRows are rows read from a batch, which closing them closes.
type batchRows struct {
	pgx.Rows
	br       pgx.BatchResults
	closeErr error
}

// Next closes the batch with the rows at their end, as pgx closes rows
// read to the end: callers rely on it.
func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.closeErr, r.br = r.br.Close(), nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.closeErr
}

// Acquire is a connection for a hand-pipelined transaction, whose first
// statement names the agency (budgetSQL).
func (d db) Acquire(ctx context.Context) (*pgxpool.Conn, error) { return d.pool.Acquire(ctx) }

// CheckIsolation fails when this login passes row-level security (a
// superuser, or BYPASSRLS) while the store holds more than one agency:
// over such a login a query that forgets its agency reads every agency's
// rows. With one agency there is nothing to keep apart, and a deployment
// of one login that never makes a second agency runs as before.
func (s *Store) CheckIsolation(ctx context.Context) error {
	var login string
	var passes bool
	var agencies int
	err := s.pool.pool.QueryRow(ctx, `SELECT r.rolname, r.rolsuper OR r.rolbypassrls, (SELECT count(*) FROM agency)
FROM pg_roles r WHERE r.rolname = current_user`).Scan(&login, &passes, &agencies)
	if err != nil {
		return fmt.Errorf("check isolation: %w", err)
	}
	if passes && agencies > 1 {
		return fmt.Errorf("check isolation: the database login %q passes row-level security (superuser or BYPASSRLS) "+
			"and the store holds %d agencies: log in as a role without it (docs/security.md, database roles)", login, agencies)
	}
	return nil
}
