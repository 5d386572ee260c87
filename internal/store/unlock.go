package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// One-time codes (migration 036): a caller found by caller ID alone, which
// proves nothing, may unlock one booking by reading back a code texted to
// the number it was made with. The code is derived from its row's nonce
// under the store's lookup key, never stored, so a copy of the database
// without the vault holds no live code.

// A code lives UnlockCodeTTL and takes UnlockCodeTries tries, the right
// one among them: six digits, three tries, one in 333,333 for a guess,
// and each try is also counted by find_booking's budgets.
const (
	UnlockCodeTTL   = 5 * time.Minute
	UnlockCodeTries = 3
)

// errNoLookupKey is a store restored without its vault: it can derive no
// code.
var errNoLookupKey = errors.New("the store has no lookup key")

// IssueUnlockCode issues a code for key's booking to conversation conv
// and queues its text to the booking's own number. A code is sent once:
// while conv holds a live one for key, it issues none and reports false.
func (s *Store) IssueUnlockCode(ctx context.Context, conv, key string) (sent bool, err error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return false, fmt.Errorf("issue unlock code: %w", err)
	}
	err = s.retry(ctx, "issue unlock code", key, func(ctx context.Context) error {
		var live bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM unlock_code WHERE conversation = $1 AND request_key = $2
AND used_at IS NULL AND expires_at > $3 AND tries < $4)`, conv, key, s.now(), UnlockCodeTries).Scan(&live); err != nil || live {
			sent = false
			return err
		}
		sent = true
		_, err := s.pool.Exec(ctx, `SELECT issue_unlock_code($1, $2, $3, $4, $5)`, conv, key, nonce, s.now(), UnlockCodeTTL)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("issue unlock code: %w", err)
	}
	return sent, nil
}

// UseUnlockCode checks code against conv's latest live code and returns
// the key of the booking it unlocks, or "" when it does not match (or
// conv holds no live code). Every check spends a try; a code that
// matched is used and unlocks nothing again.
func (s *Store) UseUnlockCode(ctx context.Context, conv, code string) (string, error) {
	secret, err := s.lookupKey(ctx)
	if err != nil || secret == nil {
		return "", fmt.Errorf("use unlock code: %w", errors.Join(err, errNoLookupKey))
	}
	var key string
	err = s.retry(ctx, "use unlock code", "", func(ctx context.Context) error {
		key = ""
		var id int64
		var nonce []byte
		err := s.pool.QueryRow(ctx, `UPDATE unlock_code SET tries = tries + 1
WHERE unlock_id = (SELECT unlock_id FROM unlock_code WHERE conversation = $1 ORDER BY unlock_id DESC LIMIT 1)
  AND used_at IS NULL AND expires_at > $2 AND tries < $3
RETURNING unlock_id, request_key, nonce`, conv, s.now(), UnlockCodeTries).Scan(&id, &key, &nonce)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			key = ""
			return nil
		case err != nil:
			return err
		case subtle.ConstantTimeCompare([]byte(unlockCode(secret, nonce)), []byte(code)) != 1:
			key = ""
			return nil
		}
		_, err = s.pool.Exec(ctx, `UPDATE unlock_code SET used_at = $2 WHERE unlock_id = $1`, id, s.now())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("use unlock code: %w", err)
	}
	return key, nil
}

// UnlockCode is the code of unlock id, for its text, the conversation it
// was issued to, and whether it can still be used: a text of a code
// expired or used is not sent.
func (s *Store) UnlockCode(ctx context.Context, id int64) (code, conv string, live bool, err error) {
	secret, err := s.lookupKey(ctx)
	if err != nil || secret == nil {
		return "", "", false, fmt.Errorf("unlock code %d: %w", id, errors.Join(err, errNoLookupKey))
	}
	var nonce []byte
	err = s.pool.QueryRow(ctx, `SELECT nonce, conversation, used_at IS NULL AND expires_at > $2 AND tries < $3
FROM unlock_code WHERE unlock_id = $1`, id, s.now(), UnlockCodeTries).Scan(&nonce, &conv, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("unlock code %d: %w", id, err)
	}
	return unlockCode(secret, nonce), conv, live, nil
}

// unlockCode is the six digits nonce stands for under secret.
func unlockCode(secret, nonce []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("unlock code\x00"))
	mac.Write(nonce)
	return fmt.Sprintf("%06d", binary.BigEndian.Uint64(mac.Sum(nil)[:8])%1_000_000)
}

// TextCaps bound the texts claimed (0: no cap on that): to one number in
// 24 hours, asked by one API key in an hour, and of one agency in an hour.
type TextCaps struct{ PerNumberDay, PerKeyHour, PerAgencyHour int }

// ClaimText counts the text message id among those its number (to, in
// E.164), the key that asked for it (by; "" for none known) and its
// agency were sent, and reports whether it stays within caps. The count
// holds every text claimed and not refused, sent or still being tried; a
// message refused is not claimed.
func (s *Store) ClaimText(ctx context.Context, id int64, to, by string, caps TextCaps) (bool, error) {
	digest, err := s.phoneDigest(ctx, to, "")
	if err != nil {
		return false, fmt.Errorf("claim text %d: %w", id, err)
	}
	var ok bool
	err = s.retry(ctx, "claim text", fmt.Sprint(id), func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, claimTextSQL, id, digest, by, s.now(), caps.PerNumberDay, caps.PerKeyHour, caps.PerAgencyHour).Scan(&ok)
	})
	if err != nil {
		return false, fmt.Errorf("claim text %d: %w", id, err)
	}
	return ok, nil
}

// claimTextSQL claims a text within the caps, or reports false.
const claimTextSQL = `
WITH counts AS (
    SELECT
        (SELECT count(*) FROM caller_message WHERE $2::bytea IS NOT NULL AND to_digest = $2 AND message_id <> $1
            AND created_at > $4::timestamptz - interval '24 hours' AND status IN ('due', 'sent')) AS to_number,
        (SELECT count(*) FROM caller_message WHERE $3 <> '' AND by_key = $3 AND message_id <> $1
            AND created_at > $4::timestamptz - interval '1 hour' AND status IN ('due', 'sent')) AS by_key,
        (SELECT count(*) FROM caller_message WHERE $7 > 0 AND agency_no = coalesce(current_agency(), 1) AND message_id <> $1
            AND (to_digest IS NOT NULL OR by_key IS NOT NULL)
            AND created_at > $4::timestamptz - interval '1 hour' AND status IN ('due', 'sent')) AS by_agency
), claimed AS (
    UPDATE caller_message SET to_digest = $2, by_key = nullif($3, '')
    WHERE message_id = $1 AND (SELECT ($5 = 0 OR to_number < $5) AND ($6 = 0 OR by_key < $6) AND ($7 = 0 OR by_agency < $7) FROM counts)
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM claimed)`
