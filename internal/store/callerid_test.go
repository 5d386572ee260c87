package store

import (
	"testing"

	"github.com/stretchr/testify/require"

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
