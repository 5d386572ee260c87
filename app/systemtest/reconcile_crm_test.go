package systemtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// A CRM write that read the store before a cancel can land after
// reconciliation told the CRM of it (the fault suite met two in CI). The
// next run must correct the record again: writing "cancelled" a second
// time is a new write, not a replay of the first correction that the CRM
// answers from its idempotency cache and never applies.
func TestReconcileCorrectsTheCRMAgainAfterAStaleWrite(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(14)
	f.releasedBehindTheSaga(key)
	require.Equal(t, 1, f.reconcile().CRM.Mismatched)
	b, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, crm.StatusCancelled, f.crmRecord(b.BookingID.String()).Status)

	// The stale write: the booking as it was before the cancel, arriving
	// for the first time, so under its own idempotency key.
	stale := activities.Viewing(b)
	stale.Status = crm.StatusScheduled
	f.putCRM(stale, "stale-writer-1")
	require.Equal(t, crm.StatusScheduled, f.crmRecord(b.BookingID.String()).Status)

	require.Equal(t, 1, f.reconcile().CRM.Mismatched)
	require.Equal(t, crm.StatusCancelled, f.crmRecord(b.BookingID.String()).Status, "corrected again")
	f.quiet()
}

// A viewing someone deleted in the CRM by hand is written again by the
// next run: the write that restores it is a new one, not the booking's
// first write, which the CRM would answer from its idempotency cache.
func TestReconcileWritesAgainAViewingDeletedByHand(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(14)
	f.eventually(func() bool { return f.synced(key) }, "mirrored")
	b, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	f.crm.Delete(b.BookingID.String())
	require.Equal(t, 1, f.reconcile().CRM.Missing)
	want := activities.Viewing(b)
	want.Title = "Viewing: the property with the agent" // the seed's resources have no display names
	require.Equal(t, want, f.crmRecord(b.BookingID.String()).Viewing, "written again")
	require.Zero(t, f.reconcile().CRM.Missing, "and found the next time")
	f.quiet()
}

// releasedBehindTheSaga cancels key in the store, as an operator in the
// database would, and terminates its saga, so that only reconciliation
// mends the mirrors.
func (f *fixture) releasedBehindTheSaga(key string) {
	f.t.Helper()
	_, err := f.acts.Store.Release(f.ctx, store.ReleaseRequest{RequestKey: key})
	require.NoError(f.t, err)
	require.NoError(f.t, f.client.TerminateWorkflow(f.ctx, key, "", "test: the saga is gone"))
}

// crmRecord is the fake CRM's record of a booking.
func (f *fixture) crmRecord(bookingID string) crm.Record {
	f.t.Helper()
	for _, r := range f.crm.Records() {
		if r.BookingID == bookingID {
			return r
		}
	}
	f.t.Fatalf("no CRM record for booking %s", bookingID)
	return crm.Record{}
}

// putCRM writes v to the CRM as another writer would.
func (f *fixture) putCRM(v crm.Viewing, idemKey string) {
	f.t.Helper()
	body, err := json.Marshal(v)
	require.NoError(f.t, err)
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPut, f.crmURL+"/v1/viewings/"+v.BookingID, bytes.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Authorization", "Bearer crm-token")
	req.Header.Set("Idempotency-Key", idemKey)
	res, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	require.NoError(f.t, res.Body.Close())
	require.Equal(f.t, http.StatusOK, res.StatusCode)
}
