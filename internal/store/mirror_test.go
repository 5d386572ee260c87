package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func TestRecordMirrorWritesWhatChangedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "req_mirror", intent("paris", agent(0), "10:00", "10:30"))
	mirrored := func() []string {
		rows, err := f.pool.Query(f.ctx, "SELECT detail::text FROM booking_event WHERE request_key = $1 AND kind = 'mirrored' ORDER BY event_id", "req_mirror")
		require.NoError(t, err)
		var details []string
		for rows.Next() {
			var d string
			require.NoError(t, rows.Scan(&d))
			details = append(details, d)
		}
		require.NoError(t, rows.Err())
		return details
	}

	require.NoError(t, f.store.RecordMirror(f.ctx, booking.MirrorRecord{RequestKey: "req_mirror", ProviderEventID: "ev1"}))
	require.NoError(t, f.store.RecordMirror(f.ctx, booking.MirrorRecord{RequestKey: "req_mirror", CRMRef: "crm1"}))
	// Again, as a retried mirror does: nothing changed, nothing written.
	require.NoError(t, f.store.RecordMirror(f.ctx, booking.MirrorRecord{RequestKey: "req_mirror", ProviderEventID: "ev1"}))
	require.NoError(t, f.store.RecordMirror(f.ctx, booking.MirrorRecord{RequestKey: "req_mirror", ProviderEventID: "ev2", CRMRef: "crm1"}))

	b, err := f.store.Lookup(f.ctx, "req_mirror")
	require.NoError(t, err)
	require.Equal(t, "ev2", b.ProviderEventID)
	require.Equal(t, "crm1", b.CRMRef, "a field not given, or unchanged, is kept")
	require.Equal(t, []string{`{"provider_event_id": "ev1"}`, `{"crm_ref": "crm1"}`, `{"provider_event_id": "ev2"}`}, mirrored(),
		"one event for each change, naming what changed alone")

	err = f.store.RecordMirror(f.ctx, booking.MirrorRecord{RequestKey: "req_none", ProviderEventID: "ev"})
	require.ErrorIs(t, err, booking.ErrNotFound)
}
