package systemtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/schema"
)

// soonPolicy lets a test book a viewing that starts in seconds, so the
// saga's wait for the viewing's end runs inside the test.
const soonPolicy = "showing-policy-soon"

// soon books a viewing that starts in two seconds and lasts length, on a resource in a zone
// where it is daytime, so the booking lies within one local day.
func (f *fixture) soon(key string, length time.Duration) receipt.Receipt {
	f.t.Helper()
	zone := "UTC"
	if h := time.Now().UTC().Hour(); h < 2 || h >= 22 {
		zone = "Asia/Tokyo"
	}
	st := store.New(f.pool, store.Config{})
	require.NoError(f.t, st.SetPolicy(f.ctx, booking.Policy{Version: soonPolicy, SlotMinutes: 30,
		ClosesAt: 24*time.Hour - time.Minute, HoldTTL: time.Minute}))
	for _, r := range []booking.Resource{
		{ID: "soon-prop", Kind: "property", Capacity: 1, TimeZone: zone, CalendarID: "soon@calendar.test"},
		{ID: "soon-agent", Kind: "agent", Capacity: 1, TimeZone: zone},
	} {
		require.NoError(f.t, st.UpsertResource(f.ctx, r))
	}
	start := time.Now().Add(2 * time.Second).Truncate(time.Second)
	r := f.commit(key, booking.CommitRequest{ExpectedPolicyVersion: soonPolicy, Intent: booking.Intent{
		PropertyID: "soon-prop", AgentID: "soon-agent", StartsAt: start, EndsAt: start.Add(length), TimeZone: zone}})
	require.Equal(f.t, receipt.StatusConfirmed, r.Status, r.Reason)
	return r
}

func TestASagaStaysOpenUntilTheViewingHasEnded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	booked := f.soon(key, 3*time.Second)
	var final receipt.Receipt
	require.NoError(t, f.client.GetWorkflow(f.ctx, key, "").Get(f.ctx, &final))
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, booked.BookingID, final.BookingID)
	require.False(t, time.Now().Before(*final.EndsAt), "the saga closed before the viewing ended")
	f.record(key, "viewing_ended")
	// Committed, mirrored, reminded, read at the end and closed, the saga
	// recorded one version marker (workflows.changeOneMarker), and the
	// SDK one TemporalChangeVersion upsert with it: not one of each for
	// every change the saga asked on the way.
	markers := map[string]int{}
	for kind, n := range f.history(key).kinds {
		if strings.HasPrefix(kind, "MarkerRecorded Version") {
			markers[kind] += n
		}
	}
	require.Equal(t, map[string]int{"MarkerRecorded Version one-version-marker": 1}, markers)
}

// Since v0.2.0 (workflows.changeFinalRead) a saga reads the store at its
// viewing's end, so a cancel made there behind its back is its last word.
func TestAViewingsEndTakesTheStoresWord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	f.soon(key, 3*time.Second)
	f.eventually(func() bool { return f.synced(key) }, "mirrors synced")
	_, err := f.acts.Store.Release(f.ctx, store.ReleaseRequest{RequestKey: key})
	require.NoError(t, err)
	var final receipt.Receipt
	require.NoError(t, f.client.GetWorkflow(f.ctx, key, "").Get(f.ctx, &final))
	require.Equal(t, receipt.StatusCancelled, final.Status, "the saga closed on an answer the store no longer holds")
	require.Zero(t, f.liveEvents("soon@calendar.test"), "the calendar still shows a cancelled booking")
}

// A saga that the last release started, and that waits for its viewing's
// end, is finished by this build's worker: the worker binary of v0.1.0
// (built from the tag) commits and mirrors the booking, on a store this
// build migrated under it, and is stopped with the timer pending; the
// contract steps run (schema.MigrateAfterRollout); a worker of this build
// takes over, replays what the old one did and, past the end of the
// replayed history, runs the new code.
func TestASagaOfTheLastReleaseFinishesOnThisBuild(t *testing.T) {
	t.Parallel()
	// The old worker starts on the store as v0.1.0 left it (its last
	// migration); then this build migrates it further, as the first new
	// worker of a rollout does, while the old one runs on.
	f := fixtureOn(t, pgtest.NewAtVersion(t, 5))
	queue := f.queue + "-v0.1.0"
	health := freeAddr(t)
	old := startBinary(t, buildAt(t, "v0.1.0", "./worker"), "-task-queue", queue, "-reconcile-every", "0",
		"-database-url", f.pool.Config().ConnString(), "-namespace", temporalServer().GetDefaultNamespace(),
		"-temporal-address", temporalServer().GetFrontendHostPort(), "-health-listen", health,
		"-calendar-endpoint", f.calendarURL+"/calendar/v3/", "-calendar-no-auth", "-crm-url", f.crmURL, "-crm-token", "crm-token")
	f.eventually(func() bool {
		res, err := http.Get("http://" + health + "/healthz")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, "the old worker started on its schema")
	conn, err := f.pool.Acquire(f.ctx)
	require.NoError(t, err)
	require.NoError(t, schema.Migrate(f.ctx, conn.Conn()))
	conn.Release()
	f.queue = queue
	key := uuid.NewString()
	// Long enough for the old build to mirror it before its viewing ends.
	booked := f.soon(key, 15*time.Second)
	f.eventually(func() bool { return f.synced(key) }, "mirrors synced by the old build")
	old.stop()
	// No worker of the last release is left: the contract steps run.
	conn, err = f.pool.Acquire(f.ctx)
	require.NoError(t, err)
	require.NoError(t, schema.MigrateAfterRollout(f.ctx, conn.Conn()))
	conn.Release()

	f.startWorker(worker.Options{})
	var final receipt.Receipt
	require.NoError(t, f.client.GetWorkflow(f.ctx, key, "").Get(f.ctx, &final))
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, booked.BookingID, final.BookingID)
	require.Contains(t, f.markers(key), "final-store-read", "the new build did not run its change past the old history")
	require.Equal(t, 1, f.liveEvents("soon@calendar.test"))
	require.Len(t, f.crm.Records(), 1)
}

// markers lists the version markers in a workflow's history.
func (f *fixture) markers(key string) []string {
	f.t.Helper()
	var ids []string
	it := f.client.GetWorkflowHistory(f.ctx, key, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		if m := ev.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
			var id string
			require.NoError(f.t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["change-id"], &id))
			ids = append(ids, id)
		}
	}
	return ids
}
