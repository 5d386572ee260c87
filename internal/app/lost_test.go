package app

import (
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// lose removes every trace of key from the store, as a restore from a
// backup taken before its commit would; only retention may touch the
// event log, so the test speaks as retention for that.
func (f *fixture) lose(key string) {
	f.t.Helper()
	require.NoError(f.t, pgx.BeginFunc(f.ctx, f.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			"SET LOCAL bookingsaga.retention = 'on'",
			"DELETE FROM booking_event WHERE request_key = $1",
			"DELETE FROM booking_resource WHERE booking_id IN (SELECT booking_id FROM booking WHERE request_key = $1)",
			"DELETE FROM booking WHERE request_key = $1",
		} {
			args := []any{key}
			if q[0] == 'S' {
				args = nil
			}
			if _, err := tx.Exec(f.ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestABookingTheStoreLostIsFlaggedNotSpoken: the saga confirmed a
// booking the store then lost. A reconciliation run flags it for
// operators and keeps its calendar events (flagged too); the status the
// agent reads is no longer "confirmed", and the store still decides.
func TestABookingTheStoreLostIsFlaggedNotSpoken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(api.Config{})
	key := f.booked(14)
	f.lose(key)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Lost, rep.Stuck.Details)
	require.Equal(t, 2, rep.Calendar.Flagged, "its events, in the property's and the agent's calendars: %v", rep.Calendar.Details)
	require.Zero(t, rep.Calendar.Orphans, "no event deleted on the store's word alone")
	require.Equal(t, "confirmed", f.event(propertyCal, key).Status)
	require.Equal(t, "confirmed", f.event(agentCal, key).Status)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, fl := range flags {
		require.Equal(t, key, fl.RequestKey)
		kinds[fl.Kind]++
	}
	require.Equal(t, map[string]int{"store_lost_booking": 1, "unknown_calendar_event": 2}, kinds)
	require.Equal(t, 0, f.reconcile().Stuck.Lost, "flagged once")

	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key, nil, &r))
	require.Equal(t, receipt.StatusPending, r.Status, "never spoken as confirmed")
	require.Equal(t, receipt.Reference(key), r.Reference)
	var a struct {
		Flags []struct {
			Kind string `json:"kind"`
		} `json:"flags"`
	}
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Len(t, a.Flags, 3, "operators see it")
}
