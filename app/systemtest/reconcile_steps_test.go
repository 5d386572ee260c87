package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// hubspotOps are the operations the HubSpot fake names, every one the
// adapter calls.
var hubspotOps = []string{"groups.create", "properties.create", "meetings.upsert", "meetings.get", "contacts.upsert",
	"contacts.get", "contacts.search", "contacts.gdpr-delete", "associations.create", "associations.delete"}

// One mirror's failure stops no other step (DM4): with HubSpot refusing
// every call (a revoked token), a reconciliation run still repairs a
// calendar event deleted by hand and applies retention; the erasure that
// could not reach HubSpot is reported in ops attention and tried again
// by the next run, and a run that gets through clears it.
func TestAReconciliationStepThatFailsStopsNoOther(t *testing.T) {
	t.Parallel()
	f, hs := setupHubSpot(t)
	url := f.serveAPI(app.EdgeConfig{})
	args := bookArgs(t, 10)
	args["contact"] = map[string]any{"name": "Jeanne Dupont", "email": "jeanne@example.com", "keep_on_file": true}
	_, out := f.mcpCall(url, "call-"+uuid.NewString(), "book", args)
	require.Equal(t, "confirmed", out.Status, out.Line)
	f.eventually(func() bool { m := hs.Meetings(); return len(m) == 1 && len(m[0].Contacts) == 1 }, "the caller on file")
	drifted := f.booked(12)
	f.deleteByHand("paris-11@calendar.test", drifted)
	old := commitRequest(slot(t, 17))
	_, err := f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "old-1", Intent: old.Intent,
		ExpectedPolicyVersion: policyVersion}})
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, `UPDATE booking SET starts_at = starts_at - interval '3 years', ends_at = ends_at - interval '3 years'
WHERE request_key = 'old-1'`)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/bookings/"+out.RequestKey+"/contact", nil, nil))

	for _, op := range hubspotOps {
		require.NoError(t, hs.Inject(fakeserver.Fault{Op: op, Status: http.StatusUnauthorized, Reason: "Authentication credentials not found."}))
	}
	rep := f.reconcile()
	require.Equal(t, "confirmed", f.event("paris-11@calendar.test", drifted).Status, "the calendar repaired")
	require.Equal(t, 1, rep.Retired, "retention applied")
	require.Len(t, rep.Failed, 1, "%+v", rep.Failed)
	require.Equal(t, booking.ActivityPurgeContacts, rep.Failed[0].Step)
	require.Len(t, hs.Contacts(), 1, "the erasure waits for HubSpot")
	var a api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Len(t, a.ReconcileFailures, 1)
	require.Equal(t, booking.ActivityPurgeContacts, a.ReconcileFailures[0].Step)
	require.Contains(t, a.ReconcileFailures[0].Error, "401")
	require.NotContains(t, a.ReconcileFailures[0].Error, "jeanne")

	hs.ClearFaults()
	rep = f.reconcile()
	require.Empty(t, rep.Failed)
	require.Empty(t, hs.Contacts(), "the next run erases the caller in HubSpot")
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Empty(t, a.ReconcileFailures, "a step that got through is no longer listed")
}
