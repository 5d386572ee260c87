package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/internal/phone"
)

// Caller ID (migration 029): a contact's phone is found again by a keyed
// digest of it in E.164, kept beside its data key and erased with it. The
// key is each agency's own (vault.lookup_key, migration 039); without it
// the digests are as unreadable as the sealed contacts.

// maxPhoneKeys bounds the bookings one number finds: a caller's own are
// a handful; more is an agency's switchboard, which caller ID can't tell
// apart anyway.
const maxPhoneKeys = 20

// lookupKeys cache each agency's lookup key once read, by agency number:
// a key never changes while its row stands.
type lookupKeys struct {
	mu  sync.Mutex
	key map[int][]byte
}

// phoneDigest is the keyed digest of number read in zone's country, or
// nil for no number or one that can't be read as a number (then caller ID
// can't find it, and nothing else changes). The agency's key is made
// when it has none: its first contact's digest, or the first after a
// restore without the vault (whose digests went with it).
func (s *Store) phoneDigest(ctx context.Context, number, zone string) ([]byte, error) {
	e164, ok := phone.E164(number, zone)
	if number == "" || !ok {
		return nil, nil
	}
	key, err := s.lookupKey(ctx)
	if err != nil || key == nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(e164))
	return mac.Sum(nil), nil
}

// lookupKey is the lookup key of the agency ctx acts for, made if it has
// none: the first of two processes making it at once keeps its own, and
// both read that one.
func (s *Store) lookupKey(ctx context.Context) ([]byte, error) {
	no := agency.From(ctx).No
	s.lookup.mu.Lock()
	defer s.lookup.mu.Unlock()
	if key := s.lookup.key[no]; key != nil {
		return key, nil
	}
	made := make([]byte, 32)
	if _, err := rand.Read(made); err != nil {
		return nil, fmt.Errorf("make lookup key: %w", err)
	}
	var key []byte
	err := s.retry(ctx, "read lookup key", "", func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, lookupKeySQL, made).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			// Another process made it after this statement's snapshot:
			// the next statement sees it.
			err = s.pool.QueryRow(ctx, `SELECT key FROM vault.lookup_key WHERE agency_no = coalesce(current_agency(), 1)`).Scan(&key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.lookup.key == nil {
		s.lookup.key = map[int][]byte{}
	}
	s.lookup.key[no] = key
	return key, nil
}

// lookupKeySQL is the agency's key, made from $1 when it has none.
const lookupKeySQL = `
WITH made AS (
    INSERT INTO vault.lookup_key (agency_no, key) VALUES (coalesce(current_agency(), 1), $1)
    ON CONFLICT (agency_no) DO NOTHING RETURNING key
)
SELECT key FROM made UNION ALL SELECT key FROM vault.lookup_key WHERE agency_no = coalesce(current_agency(), 1)`

// KeysByPhone finds the bookings whose contact has number, a number in
// international form (caller ID): their request keys, newest first, and
// ref, an opaque name of the number by which budgets may count attempts
// without holding it. Erased contacts are not found.
func (s *Store) KeysByPhone(ctx context.Context, number string) (ref string, keys []string, err error) {
	digest, err := s.phoneDigest(ctx, number, "")
	if err != nil || digest == nil {
		return "", nil, err
	}
	err = s.retry(ctx, "find by phone", "", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `
SELECT request_key FROM vault.contact_key WHERE phone_digest = $1
ORDER BY created_at DESC, request_key LIMIT $2`, digest, maxPhoneKeys)
		if err == nil {
			keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("find by phone: %w", err)
	}
	return "caller:" + hex.EncodeToString(digest), keys, nil
}
