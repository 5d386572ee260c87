package store

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// A contact's phone is found by caller ID however it was written for a
// Paris booking, and not by another country's number with the same
// digits; the digest is keyed, and goes with the contact's erasure.
func TestKeysByPhoneReadsNumbersAsNumbers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for key, number := range map[string]string{"req_intl": "+33 6 12 34 56 78", "req_national": "06 12 34 56 78", "req_prefix": "0033612345678"} {
		_, err := f.store.SealContact(f.ctx, key, booking.Contact{Name: "Ada", Phone: number}, "Europe/Paris")
		require.NoError(t, err)
	}
	_, err := f.store.SealContact(f.ctx, "req_uk", booking.Contact{Name: "Ada", Phone: "06 12 34 56 78"}, "Europe/London")
	require.NoError(t, err)

	ref, keys, err := f.store.KeysByPhone(f.ctx, "+33612345678")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"req_intl", "req_national", "req_prefix"}, keys)
	require.NotContains(t, ref, "612345678", "the budget's name holds no number")
	_, abroad, err := f.store.KeysByPhone(f.ctx, "+44612345678")
	require.NoError(t, err)
	require.Equal(t, []string{"req_uk"}, abroad, "06 12 34 56 78 written for a London booking is a UK number, and not the Paris one")

	var plain int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM vault.contact_key
WHERE position(convert_to('612345678', 'UTF8') IN phone_digest) > 0 OR phone_digest = sha256(convert_to('+33612345678', 'UTF8'))`).Scan(&plain))
	require.Zero(t, plain, "a keyed digest, not the number or its plain hash")

	require.NoError(t, f.store.EraseContact(f.ctx, "req_national", "the caller asked"))
	_, keys, err = f.store.KeysByPhone(f.ctx, "+33 6 12 34 56 78")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"req_intl", "req_prefix"}, keys)
}

// Each agency digests numbers under a key of its own, which the API
// makes with the agency's first contact: one number's digests differ
// from agency to agency, each agency's caller ID finds its own contacts
// alone, and one agency's key deleted (lost, or erased with its data)
// leaves another's caller ID as it was.
func TestEachAgencyDigestsNumbersUnderItsOwnKey(t *testing.T) {
	t.Parallel()
	owner, as := roles(t)
	ctx := t.Context()
	var no int
	require.NoError(t, owner.QueryRow(ctx, "INSERT INTO agency (agency_id, name) VALUES ('lyon', 'Lyon') RETURNING agency_no").Scan(&no))
	paris, lyon := ctx, agency.With(ctx, agency.Agency{No: no, ID: "lyon"})
	api := New(as("bookingsaga_api"), Config{})
	const number = "+33612345678"
	for c, key := range map[context.Context]string{paris: "req_paris", lyon: "req_lyon"} {
		_, err := api.SealContact(c, key, booking.Contact{Name: "Ada", Phone: number}, "Europe/Paris")
		require.NoError(t, err)
	}
	digest := func(c context.Context, st *Store) []byte {
		d, err := st.phoneDigest(c, number, "")
		require.NoError(t, err)
		return d
	}
	require.NotEqual(t, digest(paris, api), digest(lyon, api), "one number, one digest in every agency")
	for c, want := range map[context.Context]string{paris: "req_paris", lyon: "req_lyon"} {
		_, keys, err := api.KeysByPhone(c, number)
		require.NoError(t, err)
		require.Equal(t, []string{want}, keys)
	}

	require.NoError(t, pgx.BeginFunc(ctx, owner, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('bookingsaga.agency', $1::int::text, true)", no); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM vault.lookup_key")
		return err
	}))
	fresh := New(as("bookingsaga_api"), Config{}) // no key cached
	_, keys, err := fresh.KeysByPhone(lyon, number)
	require.NoError(t, err)
	require.Empty(t, keys, "lyon's key gone, its digests find nothing")
	_, keys, err = fresh.KeysByPhone(paris, number)
	require.NoError(t, err)
	require.Equal(t, []string{"req_paris"}, keys, "the default agency's caller ID is as it was")
}
