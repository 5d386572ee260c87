package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Contacts are sealed under a data key per request key, kept in
// vault.contact_key (migration 006). Erasing a contact deletes its key, so
// every sealed copy -- in Temporal's history, in booking_contact, in a
// backup -- becomes unreadable at once.

// sealVersion starts every sealed box, so a later format can be told apart.
const sealVersion = 1

// SealContact seals c under key's data key, made on first use, and returns
// the contact in its sealed form. After key's contact was erased it returns
// nil: a request resent after an erasure must not bring the contact back.
// zone is the booking's: its country reads a phone written without a
// country code, for the keyed digest caller ID finds it by (callerid.go).
func (s *Store) SealContact(ctx context.Context, key string, c booking.Contact, zone string) (*booking.Contact, error) {
	if err := booking.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("seal contact: %w", err)
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("seal contact %s: %w", key, err)
	}
	digest, err := s.phoneDigest(ctx, c.Phone, zone)
	if err != nil {
		return nil, fmt.Errorf("seal contact %s: %w", key, err)
	}
	var dek []byte
	err = s.retry(ctx, "seal contact", key, func(ctx context.Context) error {
		// The update makes RETURNING give the key already there; on a
		// tombstone the digest goes too (migration 029's trigger).
		return s.pool.QueryRow(ctx, `
INSERT INTO vault.contact_key (request_key, data_key, created_at, phone_digest) VALUES ($1, $2, $3, $4)
ON CONFLICT (agency_no, request_key) DO UPDATE SET phone_digest = coalesce(EXCLUDED.phone_digest, vault.contact_key.phone_digest)
RETURNING data_key`, key, fresh, s.now(), digest).Scan(&dek)
	})
	if err != nil || dek == nil {
		return nil, err
	}
	c.Sealed = nil // every plain field is sealed: the consent and the language too
	plain, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("seal contact %s: %w", key, err)
	}
	box, err := seal(dek, key, plain)
	if err != nil {
		return nil, fmt.Errorf("seal contact %s: %w", key, err)
	}
	return &booking.Contact{Sealed: box}, nil
}

// Contact opens the contact stored with key's booking: after an erasure
// it returns booking.ErrContactErased, and booking.ErrNoContact when there
// is none. A booking a reschedule made without a contact of its own has
// its caller's: that of the booking it replaced, and so on back.
func (s *Store) Contact(ctx context.Context, key string) (booking.Contact, error) {
	_, c, err := s.nearestContact(ctx, key)
	return c, err
}

// nearestContact is the contact nearest key in its reschedule chain (its
// own, else the booking's it replaced, and so on back), and the key it is
// stored under; an erasure ends the search.
func (s *Store) nearestContact(ctx context.Context, key string) (string, booking.Contact, error) {
	keys, err := s.ancestors(ctx, key)
	if err != nil {
		return "", booking.Contact{}, err
	}
	for _, k := range keys {
		c, err := s.contactOf(ctx, k)
		if !errors.Is(err, booking.ErrNoContact) {
			return k, c, err
		}
	}
	return "", booking.Contact{}, fmt.Errorf("read contact %s: %w", key, booking.ErrNoContact)
}

// ancestors are key and the keys of the bookings it replaced, nearest
// first.
func (s *Store) ancestors(ctx context.Context, key string) ([]string, error) {
	var keys []string
	err := s.retry(ctx, "read contact", key, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, chainSQL, key, false)
		if err == nil {
			keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	return keys, err
}

// chainSQL lists the keys a reschedule chain links to $1, in order of
// distance: those it replaced, and, when $2, those that replaced it.
// The depth bound only guards against a cycle a bug could make.
const chainSQL = `WITH RECURSIVE chain (request_key, depth, up) AS (` + chainBody + `)
SELECT request_key FROM chain GROUP BY request_key ORDER BY min(depth), request_key`

// chainBody is chainSQL's recursive query, which other statements over
// the same chain share.
const chainBody = `
    SELECT $1::text, 0, NULL::boolean
    UNION
    SELECT CASE WHEN step.up THEN b.replaces_request_key ELSE b.replaced_by_request_key END, c.depth + 1, step.up
    FROM chain c
    JOIN booking b ON b.request_key = c.request_key
    CROSS JOIN (VALUES (true), (false)) AS step (up)
    WHERE c.depth < 64 AND (c.up IS NULL OR c.up = step.up) AND (step.up OR $2)
      AND CASE WHEN step.up THEN b.replaces_request_key ELSE b.replaced_by_request_key END IS NOT NULL
`

// contactOf opens the contact stored with key's own booking, or with its
// refusal when it was refused after a pending answer (migration 047).
func (s *Store) contactOf(ctx context.Context, key string) (booking.Contact, error) {
	var (
		dek, box           []byte
		erased             bool
		name, phone, email *string
		stored             bool
	)
	err := s.retry(ctx, "read contact", key, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
SELECT k.data_key, k.erased_at IS NOT NULL, coalesce(c.sealed, r.contact_sealed), c.name, c.phone, c.email,
    c.booking_id IS NOT NULL OR r.contact_sealed IS NOT NULL
FROM (SELECT $1::text AS request_key) q
LEFT JOIN vault.contact_key k USING (request_key)
LEFT JOIN booking b USING (request_key)
LEFT JOIN booking_contact c USING (booking_id)
LEFT JOIN booking_refusal r ON r.request_key = q.request_key`, key).Scan(&dek, &erased, &box, &name, &phone, &email, &stored)
	})
	switch {
	case err != nil:
		return booking.Contact{}, err
	case erased:
		return booking.Contact{}, fmt.Errorf("read contact %s: %w", key, booking.ErrContactErased)
	case !stored:
		return booking.Contact{}, fmt.Errorf("read contact %s: %w", key, booking.ErrNoContact)
	case box == nil: // written in plain text by the release before
		return booking.Contact{Name: deref(name), Phone: deref(phone), Email: deref(email)}, nil
	}
	plain, err := open(dek, key, box)
	if err != nil {
		return booking.Contact{}, fmt.Errorf("read contact %s: %w", key, err)
	}
	var c booking.Contact
	if err := json.Unmarshal(plain, &c); err != nil {
		return booking.Contact{}, fmt.Errorf("read contact %s: %w", key, err)
	}
	return c, nil
}

// EraseContact erases key's contact, and with it the contact of every
// booking a reschedule linked to key (the same caller's) and the reasons
// of the hand-offs naming them: their data keys and stored copies are
// deleted, tombstones keep them from being sealed
// again, and the event log records the erasure and its reason without the
// data. Erasing twice is done once; booking.ErrNoContact means the store
// never had a contact for any of them.
func (s *Store) EraseContact(ctx context.Context, key, reason string) error {
	if err := booking.ValidateKey(key); err != nil {
		return fmt.Errorf("erase contact: %w", err)
	}
	return s.retry(ctx, "erase contact", key, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, chainSQL, key, true)
			if err != nil {
				return err
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			var known bool
			err = tx.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM vault.contact_key WHERE request_key = ANY($1))
    OR EXISTS (SELECT 1 FROM booking_contact JOIN booking USING (booking_id) WHERE request_key = ANY($1))`, keys).Scan(&known)
			if err != nil {
				return err
			}
			// The hand-offs of these bookings hold the caller's words.
			tag, err := tx.Exec(ctx, eraseHandoffsSQL, keys, s.now())
			if err != nil {
				return err
			}
			if !known && tag.RowsAffected() == 0 {
				return booking.ErrNoContact // retry names the operation
			}
			for _, k := range keys {
				if _, err := tx.Exec(ctx, eraseSQL, k, s.now()); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `SELECT record_contact_erased($1, $2)`, k, reason); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// eraseSQL leaves a tombstone for the key and deletes the stored copy
// and the links to the caller's page;
// record_contact_erased (migration 023) then records the erasure against
// the booking, once. A second erasure finds the tombstone and changes
// nothing.
const eraseSQL = `
WITH k AS (
    INSERT INTO vault.contact_key (request_key, data_key, erased_at) VALUES ($1, NULL, $2)
    ON CONFLICT (agency_no, request_key) DO UPDATE SET data_key = NULL, erased_at = EXCLUDED.erased_at
        WHERE vault.contact_key.erased_at IS NULL
    RETURNING request_key
), l AS (
    DELETE FROM vault.caller_link WHERE request_key = $1
), r AS (
    UPDATE booking_refusal SET contact_sealed = NULL WHERE request_key = $1 AND contact_sealed IS NOT NULL
)
DELETE FROM booking_contact c USING booking b WHERE c.booking_id = b.booking_id AND b.request_key = $1`

// eraseHandoffsSQL deletes the data keys of the hand-offs naming any of
// the keys, and their sealed reasons and callbacks.
const eraseHandoffsSQL = `
WITH h AS (
    SELECT handoff_id FROM handoff WHERE request_keys && $1::text[]
), k AS (
    INSERT INTO vault.handoff_key (handoff_id, data_key, erased_at) SELECT handoff_id, NULL, $2 FROM h
    ON CONFLICT (handoff_id) DO UPDATE SET data_key = NULL, erased_at = EXCLUDED.erased_at
)
UPDATE handoff SET reason = NULL, reason_sealed = NULL, callback_sealed = NULL WHERE handoff_id IN (SELECT handoff_id FROM h)`

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// seal is AES-256-GCM under dek, bound to key so that a box can't be
// passed off as another booking's.
func seal(dek []byte, key string, plain []byte) ([]byte, error) {
	aead, err := newAEAD(dek)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return aead.Seal(out, out[1:], plain, []byte(key)), nil
}

func open(dek []byte, key string, box []byte) ([]byte, error) {
	aead, err := newAEAD(dek)
	if err != nil {
		return nil, err
	}
	if len(box) < 1+aead.NonceSize() || box[0] != sealVersion {
		return nil, errors.New("sealed contact is malformed")
	}
	return aead.Open(nil, box[1:1+aead.NonceSize()], box[1+aead.NonceSize():], []byte(key))
}

func newAEAD(dek []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(dek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
