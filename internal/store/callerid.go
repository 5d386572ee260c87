package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/internal/phone"
)

// Caller ID (migration 029): a contact's phone is found again by a keyed
// digest of it in E.164, kept beside its data key and erased with it. The
// key is the store's own (vault.lookup_key); without it the digests are
// as unreadable as the sealed contacts.

// maxPhoneKeys bounds the bookings one number finds: a caller's own are
// a handful; more is an agency's switchboard, which caller ID can't tell
// apart anyway.
const maxPhoneKeys = 20

// lookupKey caches the store's lookup key once read: it never changes.
type lookupKey struct {
	mu  sync.Mutex
	key []byte
}

// phoneDigest is the keyed digest of number read in zone's country, or
// nil for no number or one that can't be read as a number (then caller ID
// can't find it, and nothing else changes). A store without a lookup key
// (restored without its vault) digests nothing.
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

func (s *Store) lookupKey(ctx context.Context) ([]byte, error) {
	s.lookup.mu.Lock()
	defer s.lookup.mu.Unlock()
	if s.lookup.key != nil {
		return s.lookup.key, nil
	}
	var key []byte
	err := s.retry(ctx, "read lookup key", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT key FROM vault.lookup_key`).Scan(&key)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.lookup.key = key
	return key, nil
}

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
