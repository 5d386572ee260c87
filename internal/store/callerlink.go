package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The links to the callers' pages (migration 046): a token derived from
// the data key the caller's contact is sealed under, so that every
// message of one booking and its moves, and every try of one message,
// carries the same link without the store keeping it; the store keeps its
// SHA-256 alone.

// CallerLink is the token of the link to the page of key's caller, made
// (or kept) to expire at expires: that of the contact nearest key in its
// moves (Contact), in its current generation. booking.ErrNoContact and
// booking.ErrContactErased mean there is no one to give one to.
func (s *Store) CallerLink(ctx context.Context, key string, expires time.Time) (string, error) {
	anchor, _, err := s.nearestContact(ctx, key)
	if err != nil {
		return "", err
	}
	var (
		dek []byte
		gen int
	)
	err = s.retry(ctx, "caller link", key, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT k.data_key,
    coalesce((SELECT max(generation) + 1 FROM vault.caller_link l WHERE l.request_key = k.request_key AND l.revoked_at IS NOT NULL), 0)
FROM vault.contact_key k WHERE k.request_key = $1`, anchor).Scan(&dek, &gen)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", fmt.Errorf("caller link %s: %w", key, booking.ErrNoContact)
	case err != nil:
		return "", fmt.Errorf("caller link %s: %w", key, err)
	case dek == nil:
		return "", fmt.Errorf("caller link %s: %w", key, booking.ErrContactErased)
	}
	token := linkToken(dek, gen)
	hash := sha256.Sum256([]byte(token))
	err = s.retry(ctx, "caller link", key, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO vault.caller_link (token_hash, request_key, generation, expires_at, created_at)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agency_no, token_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
			hash[:], anchor, gen, expires, s.now())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("caller link %s: %w", key, err)
	}
	return token, nil
}

// linkToken is the token of generation gen of the link of the contact
// sealed under dek: HMAC-SHA-256 under the contact's random data key,
// cut to booking.LinkTokenBytes, in base64url.
func linkToken(dek []byte, gen int) string {
	mac := hmac.New(sha256.New, dek)
	mac.Write([]byte("bookingsaga caller page " + strconv.Itoa(gen)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:booking.LinkTokenBytes])
}

// FollowLink is what token opens: the newest booking of the moves of the
// booking it was made for. booking.ErrLinkUnknown, ErrLinkExpired and
// ErrLinkRevoked say why it opens nothing.
func (s *Store) FollowLink(ctx context.Context, token string) (booking.Link, error) {
	hash := sha256.Sum256([]byte(token))
	var (
		l       booking.Link
		revoked bool
	)
	err := s.retry(ctx, "follow link", "", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `WITH RECURSIVE link AS (
    SELECT request_key, expires_at, revoked_at IS NOT NULL AS revoked FROM vault.caller_link WHERE token_hash = $1
), moves (request_key, depth) AS (
    SELECT request_key, 0 FROM link
    UNION
    SELECT b.replaced_by_request_key, m.depth + 1 FROM moves m JOIN booking b USING (request_key)
    WHERE b.replaced_by_request_key IS NOT NULL AND m.depth < 64
)
SELECT (SELECT request_key FROM moves ORDER BY depth DESC LIMIT 1), expires_at, revoked FROM link`, hash[:]).Scan(&l.RequestKey, &l.ExpiresAt, &revoked)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return booking.Link{}, booking.ErrLinkUnknown
	case err != nil:
		return booking.Link{}, fmt.Errorf("follow link: %w", err)
	case revoked:
		return booking.Link{}, booking.ErrLinkRevoked
	case !s.now().Before(l.ExpiresAt):
		return booking.Link{}, booking.ErrLinkExpired
	}
	return l, nil
}

// RevokeLinks revokes the links to the page of key's caller, of key and
// every booking its moves link to it, and reports how many it revoked:
// the next message carries the next generation's.
func (s *Store) RevokeLinks(ctx context.Context, key string) (int, error) {
	var n int64
	err := s.retry(ctx, "revoke links", key, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `WITH RECURSIVE chain (request_key, depth, up) AS (`+chainBody+`)
UPDATE vault.caller_link SET revoked_at = $3 WHERE revoked_at IS NULL AND request_key IN (SELECT request_key FROM chain)`, key, true, s.now())
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoke links %s: %w", key, err)
	}
	return int(n), nil
}
