package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Each agency's accounts at its mirrors (migration 042): the settings of
// its calendars', CRMs', Twilio's and SMTP server's clients, by kind, as
// internal/accounts reads and checks them. The store keeps them and
// never interprets them.

// MirrorAccounts are the agency's accounts' settings, by kind.
func (s *Store) MirrorAccounts(ctx context.Context) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.retry(ctx, "read mirror accounts", "", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT kind, settings FROM vault.mirror_account`)
		if err != nil {
			return err
		}
		clear(out)
		var kind string
		var settings []byte
		_, err = pgx.ForEachRow(rows, []any{&kind, &settings}, func() error {
			out[kind] = append([]byte(nil), settings...)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("mirror accounts: %w", err)
	}
	return out, nil
}

// MirrorAccountsSet are the kinds the agency set an account for.
func (s *Store) MirrorAccountsSet(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind FROM vault.mirror_account ORDER BY kind`)
	if err != nil {
		return nil, fmt.Errorf("mirror accounts set: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("mirror accounts set: %w", err)
	}
	return out, nil
}

// PutMirrorAccount sets the agency's account of kind, replacing the one
// before.
func (s *Store) PutMirrorAccount(ctx context.Context, kind string, settings []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO vault.mirror_account (kind, settings) VALUES ($1, $2)
ON CONFLICT (agency_no, kind) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`, kind, settings)
	if err != nil {
		return fmt.Errorf("put mirror account %s: %w", kind, err)
	}
	return nil
}

// DeleteMirrorAccount removes the agency's account of kind.
func (s *Store) DeleteMirrorAccount(ctx context.Context, kind string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM vault.mirror_account WHERE kind = $1`, kind); err != nil {
		return fmt.Errorf("delete mirror account %s: %w", kind, err)
	}
	return nil
}
