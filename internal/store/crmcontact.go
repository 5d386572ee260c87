package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A caller on file: the CRM contact a caller who agreed to be kept on
// file was linked to, by the request key whose contact it is (migration
// 031). The contact itself stays sealed in the vault; the CRM's id for it
// is a reference.

// CallerOnFile is key's caller as the CRM mirror may use them: the
// contact (the nearest a reschedule chain holds), the key it is stored
// under, and the CRM contact linked to it before, if any. It returns
// booking.ErrNoContact when there is none to use: none given, not on file
// (no consent), or erased.
func (s *Store) CallerOnFile(ctx context.Context, key string) (booking.OnFile, error) {
	k, c, err := s.nearestContact(ctx, key)
	switch {
	case errors.Is(err, booking.ErrContactErased):
		return booking.OnFile{}, fmt.Errorf("caller on file %s: %w", key, booking.ErrNoContact)
	case err != nil:
		return booking.OnFile{}, err
	case !c.KeepOnFile:
		return booking.OnFile{}, fmt.Errorf("caller on file %s: not kept on file: %w", key, booking.ErrNoContact)
	}
	out := booking.OnFile{OwnerKey: k, Contact: c}
	err = s.retry(ctx, "caller on file", k, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT crm, contact_ref, created FROM vault.crm_contact WHERE request_key = $1 AND forgotten_at IS NULL`,
			k).Scan(&out.Linked.CRM, &out.Linked.ContactRef, &out.Linked.Created)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	return out, err
}

// RecordCRMContact keeps the CRM contact linked to ownerKey's caller; a
// contact staff merged into another is replaced by the one it became. It
// reports forgotten when the caller's CRM contact was deleted for an
// erasure already: the link raced the erasure, and the contact it found
// or made must go too (the row keeps its first contact, forgotten).
func (s *Store) RecordCRMContact(ctx context.Context, ownerKey string, c booking.CRMContact) (forgotten bool, err error) {
	err = s.retry(ctx, "record crm contact", ownerKey, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
INSERT INTO vault.crm_contact (request_key, crm, contact_ref, linked_at, created) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (agency_no, request_key) DO UPDATE SET
    crm = CASE WHEN vault.crm_contact.forgotten_at IS NULL THEN EXCLUDED.crm ELSE vault.crm_contact.crm END,
    contact_ref = CASE WHEN vault.crm_contact.forgotten_at IS NULL THEN EXCLUDED.contact_ref ELSE vault.crm_contact.contact_ref END,
    created = CASE WHEN vault.crm_contact.forgotten_at IS NULL THEN EXCLUDED.created ELSE vault.crm_contact.created END
RETURNING forgotten_at IS NOT NULL`, ownerKey, c.CRM, c.ContactRef, s.now(), c.Created).Scan(&forgotten)
	})
	return forgotten, err
}

// CRMContactsToForget lists, at most limit, the CRM contacts of callers
// erased in the store (on request or at retention) that the CRM has not
// been asked to delete yet.
func (s *Store) CRMContactsToForget(ctx context.Context, limit int) ([]booking.CRMContact, error) {
	var out []booking.CRMContact
	err := s.retry(ctx, "crm contacts to forget", "", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `
SELECT c.request_key, c.crm, c.contact_ref, c.created, ARRAY(
    WITH RECURSIVE chain AS (
        SELECT request_key, crm_ref FROM booking WHERE request_key = c.request_key
        UNION SELECT b.request_key, b.crm_ref FROM booking b JOIN chain ON b.replaces_request_key = chain.request_key
    ) SELECT crm_ref FROM chain WHERE crm_ref IS NOT NULL ORDER BY crm_ref)
FROM vault.crm_contact c JOIN vault.contact_key k USING (request_key)
WHERE c.forgotten_at IS NULL AND k.erased_at IS NOT NULL ORDER BY c.linked_at, c.request_key LIMIT $1`, limit)
		if err == nil {
			out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[booking.CRMContact])
		}
		return err
	})
	return out, err
}

// ForgotCRMContact records that the CRM deleted ownerKey's contact ref.
func (s *Store) ForgotCRMContact(ctx context.Context, ownerKey, ref string) error {
	return s.retry(ctx, "forgot crm contact", ownerKey, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE vault.crm_contact SET forgotten_at = $3 WHERE request_key = $1 AND contact_ref = $2 AND forgotten_at IS NULL`,
			ownerKey, ref, s.now())
		return err
	})
}
