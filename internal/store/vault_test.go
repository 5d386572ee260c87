package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

var ada = booking.Contact{Name: "Ada Lovelace", Phone: "+33 6 12 34 56 78"}

// sealedCommit commits key with ada's contact sealed as the API seals it.
func (f *fixture) sealedCommit(t *testing.T, key, from, to string) Outcome {
	t.Helper()
	sealed, err := f.store.SealContact(f.ctx, key, ada, "Europe/Paris")
	require.NoError(t, err)
	require.False(t, sealed.HasPlain(), "a sealed contact carries nothing in plain text")
	req := commitReq(key, intent("paris", agent(0), from, to))
	req.Contact = sealed
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	return out
}

func (f *fixture) storedContact(t *testing.T, key string) string {
	t.Helper()
	var row string
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT coalesce(c.name, '') || coalesce(c.phone, '') || coalesce(encode(c.sealed, 'escape'), '')
FROM booking_contact c JOIN booking USING (booking_id) WHERE request_key = $1`, key).Scan(&row))
	return row
}

func TestASealedContactRestsSealedAndOpensWithItsKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.sealedCommit(t, "req_sealed", "10:00", "10:30")
	require.NotContains(t, f.storedContact(t, "req_sealed"), "Lovelace")
	require.NotContains(t, f.storedContact(t, "req_sealed"), "12 34 56 78")

	got, err := f.store.Contact(f.ctx, "req_sealed")
	require.NoError(t, err)
	require.Equal(t, ada, got)

	// A resend seals under the same key: both boxes open.
	again, err := f.store.SealContact(f.ctx, "req_sealed", ada, "Europe/Paris")
	require.NoError(t, err)
	var dek []byte
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT data_key FROM vault.contact_key WHERE request_key = 'req_sealed'").Scan(&dek))
	plain, err := open(dek, "req_sealed", again.Sealed)
	require.NoError(t, err)
	require.Contains(t, string(plain), "Lovelace")
	_, err = open(dek, "req_other", again.Sealed)
	require.Error(t, err, "a box is bound to its own request key")
}

func TestAPlainContactOfTheReleaseBeforeIsSealedByTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("req_plain", intent("paris", agent(0), "11:00", "11:30"))
	req.Contact = &ada
	_, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.NotContains(t, f.storedContact(t, "req_plain"), "Lovelace")
	got, err := f.store.Contact(f.ctx, "req_plain")
	require.NoError(t, err)
	require.Equal(t, ada, got)
}

func TestErasureDeletesTheKeyAndLeavesTheBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out := f.sealedCommit(t, "req_erase", "12:00", "12:30")
	box, err := f.store.SealContact(f.ctx, "req_erase", ada, "Europe/Paris") // a copy, as Temporal's history keeps one
	require.NoError(t, err)

	require.NoError(t, f.store.EraseContact(f.ctx, "req_erase", "request"))
	require.NoError(t, f.store.EraseContact(f.ctx, "req_erase", "request"), "erasing twice is done once")

	_, err = f.store.Contact(f.ctx, "req_erase")
	require.ErrorIs(t, err, booking.ErrContactErased)
	var keys, rows int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT (SELECT count(*) FROM vault.contact_key WHERE data_key IS NOT NULL),
	(SELECT count(*) FROM booking_contact)`).Scan(&keys, &rows))
	require.Zero(t, keys, "no data key is left to open the history's copy")
	require.Zero(t, rows)
	require.NotNil(t, box.Sealed)

	b, err := f.store.Lookup(f.ctx, "req_erase")
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, b.Status, "the booking stands")
	require.Equal(t, out.Booking.BookingID, b.BookingID)
	events, err := f.store.Events(f.ctx, "req_erase")
	require.NoError(t, err)
	var erased []booking.Event
	for _, e := range events {
		require.NotContains(t, e.Detail, "Lovelace")
		if e.Kind == "contact_erased" {
			erased = append(erased, e)
		}
	}
	require.Len(t, erased, 1, "the event log records the erasure once")
	require.JSONEq(t, `{"reason":"request"}`, erased[0].Detail)

	resent, err := f.store.SealContact(f.ctx, "req_erase", ada, "Europe/Paris")
	require.NoError(t, err)
	require.Nil(t, resent, "a request resent after the erasure brings no contact back")
	require.ErrorIs(t, f.store.EraseContact(f.ctx, "req_never", "request"), booking.ErrNoContact)
}

func TestRetentionErasesKeysAndRows(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.sealedCommit(t, "req_due", "13:00", "13:30")
	// A request refused after sealing: its key outlives no booking.
	_, err := f.store.SealContact(f.ctx, "req_refused", ada, "Europe/Paris")
	require.NoError(t, err)

	n, err := f.store.PurgeContacts(f.ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is due yet")

	f.clock.Advance(32 * 24 * time.Hour)
	n, err = f.store.PurgeContacts(f.ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for _, key := range []string{"req_due", "req_refused"} {
		_, err = f.store.Contact(f.ctx, key)
		require.ErrorIs(t, err, booking.ErrContactErased, key)
	}
	var rows int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_contact").Scan(&rows))
	require.Zero(t, rows)
}

// TestARescheduledBookingKeepsItsCallersContact: the booking a reschedule
// makes, under its new key, opens the contact its caller gave the one it
// replaced; erasing by either key erases it for both.
func TestARescheduledBookingKeepsItsCallersContact(t *testing.T) {
	t.Parallel()
	for _, eraseBy := range []string{"req_moved", "req_first"} {
		t.Run(eraseBy, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.sealedCommit(t, "req_first", "10:00", "10:30")
			move := moving("req_first", intent("paris", agent(0), "11:00", "11:30"))
			f.booked(t, "req_moved", move)
			got, err := f.store.Contact(f.ctx, "req_moved")
			require.NoError(t, err)
			require.Equal(t, ada.Phone, got.Phone, "the moved booking's caller is the same")

			require.NoError(t, f.store.EraseContact(f.ctx, eraseBy, "caller asked"))
			for _, key := range []string{"req_first", "req_moved"} {
				_, err := f.store.Contact(f.ctx, key)
				require.ErrorIs(t, err, booking.ErrContactErased, key)
			}
			// A resend of the reschedule with the contact brings none back.
			sealed, err := f.store.SealContact(f.ctx, "req_moved", ada, "Europe/Paris")
			require.NoError(t, err)
			require.Nil(t, sealed)
		})
	}
}
