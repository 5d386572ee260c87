package systemtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/bookingsaga/bookingsaga/app"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

const (
	propertyCal = "paris-11@calendar.test"
	agentCal    = "agent-00@calendar.test"
)

// reconcile runs one Reconcile workflow on the fixture's worker.
func (f *fixture) reconcile() workflows.ReconcileReport {
	f.t.Helper()
	_, _, rep := f.reconcileRun()
	return rep
}

// reconcileRun is reconcile, with the workflow id and its first run's id
// (a run continues as new page by page).
func (f *fixture) reconcileRun() (id, firstRun string, rep workflows.ReconcileReport) {
	f.t.Helper()
	id = "reconcile-" + uuid.NewString()
	run, err := f.client.ExecuteWorkflow(f.ctx, client.StartWorkflowOptions{ID: id, TaskQueue: f.queue},
		workflows.Reconcile, workflows.ReconcileInput{Window: 7 * 24 * time.Hour, BatchSize: 2, StuckAfter: time.Millisecond})
	require.NoError(f.t, err)
	firstRun = run.GetRunID() // Get follows the run's continuations
	require.NoError(f.t, run.Get(f.ctx, &rep))
	return id, firstRun, rep
}

// booked commits through the saga and waits until it is mirrored.
func (f *fixture) booked(hour int) string {
	f.t.Helper()
	key := uuid.NewString()
	require.Equal(f.t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(f.t, hour))).Status)
	f.eventually(func() bool { return f.synced(key) }, "mirrored")
	return key
}

// deleteByHand deletes key's event from cal as a person would: Google
// keeps it as a cancelled tombstone.
func (f *fixture) deleteByHand(cal, key string) {
	f.t.Helper()
	ev := f.event(cal, key)
	ev.Status = "cancelled"
	f.calendar.Put(cal, &ev)
}

func (f *fixture) event(cal, key string) calendar.Event {
	f.t.Helper()
	for _, ev := range f.calendar.Events(cal) {
		if ev.Id == gcal.EventID(key) {
			return ev
		}
	}
	f.t.Fatalf("no event for %s in %s", key, cal)
	return calendar.Event{}
}

// quiet runs reconciliation again and requires that it changes nothing.
func (f *fixture) quiet() {
	f.t.Helper()
	require.Zero(f.t, f.reconcile().Changed(), "a second run over the same state changes nothing")
}

func TestReconcileRecreatesAnEventDeletedByHand(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(10)
	f.deleteByHand(agentCal, key)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Calendar.Missing, rep.Calendar.Details)
	require.Equal(t, "confirmed", f.event(agentCal, key).Status)
	f.quiet()
}

func TestReconcileMovesAMovedEventBack(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(11)
	ev := f.event(propertyCal, key)
	ev.Start = &calendar.EventDateTime{DateTime: slot(t, 15).Format(time.RFC3339), TimeZone: "Europe/Paris"}
	ev.End = &calendar.EventDateTime{DateTime: slot(t, 16).Format(time.RFC3339), TimeZone: "Europe/Paris"}
	f.calendar.Put(propertyCal, &ev)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Calendar.Moved, rep.Calendar.Details)
	start, err := time.Parse(time.RFC3339, f.event(propertyCal, key).Start.DateTime)
	require.NoError(t, err)
	require.True(t, start.Equal(slot(t, 11)))
	f.quiet()
}

func TestReconcileFlagsAForeignEventAndNeverDeletesIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(12)
	f.calendar.Put(agentCal, &calendar.Event{Id: "dentist01", Summary: "dentist",
		Start: &calendar.EventDateTime{DateTime: slot(t, 12).Add(10 * time.Minute).Format(time.RFC3339)},
		End:   &calendar.EventDateTime{DateTime: slot(t, 13).Format(time.RFC3339)}})

	rep := f.reconcile()
	require.Equal(t, 1, rep.Calendar.Flagged, rep.Calendar.Details)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	require.Len(t, flags, 1)
	require.Equal(t, "dentist01", flags[0].EventID)
	f.quiet()
	var live bool
	for _, ev := range f.calendar.Events(agentCal) {
		live = live || ev.Id == "dentist01" && ev.Status == "confirmed"
	}
	require.True(t, live, "the foreign event is still there")

	resolved, err := f.acts.Store.ResolveFlag(f.ctx, flags[0].ID, "agent moved the dentist")
	require.NoError(t, err)
	require.Equal(t, "agent moved the dentist", resolved.Note)
	events, err := f.acts.Store.Events(f.ctx, flags[0].RequestKey)
	require.NoError(t, err)
	require.Equal(t, "drift_resolved", events[len(events)-1].Kind)
}

func TestReconcileRemovesAnOrphanEvent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(13)
	// The booking is cancelled behind the saga's back (an operator in the
	// database, say), and the saga is gone (terminated): its events are
	// orphans now, and only the run repairs them. A live saga would be
	// told of the cancellation and race the run to its own mirrors (CI
	// met that with the timer shift at 50 ms).
	f.releasedBehindTheSaga(key)
	// And an event of ours whose key the store does not know: flagged and
	// kept, since the store may have lost it (TestABookingTheStoreLostIsFlaggedNotSpoken).
	ghost := calendars.Booking{Calendar: calendars.Ref{Provider: booking.ProviderGoogle, ID: propertyCal}, BookingID: uuid.NewString(), RequestKey: "never-committed", PropertyRef: "paris-11",
		Reference: "BS-GHOST", StartsAt: slot(t, 17), EndsAt: slot(t, 17).Add(30 * time.Minute), TimeZone: "Europe/Paris"}
	_, err := f.acts.Calendar.Upsert(f.ctx, ghost)
	require.NoError(t, err)

	rep := f.reconcile()
	require.Equal(t, 2, rep.Calendar.Orphans, rep.Calendar.Details)
	require.Equal(t, 1, rep.Calendar.Flagged, "the unknown key's event")
	require.Equal(t, "confirmed", f.event(propertyCal, "never-committed").Status, "kept")
	require.Equal(t, 1, rep.CRM.Mismatched, "the CRM is told of the cancellation too")
	require.Equal(t, "cancelled", f.event(propertyCal, key).Status)
	require.Equal(t, "cancelled", f.event(agentCal, key).Status)
	f.quiet()
}

// A saga stuck in UNKNOWN because its worker cannot read the store is
// found by a reconciliation run, which nudges it; it settles from its own
// read of the store once that answers, never from the run's word (anyone
// who reaches Temporal could send that word: workflows'
// TestAForgedReconcileSignalIsNotTheStoresWord).
func TestReconcileSettlesASagaStuckInUnknown(t *testing.T) {
	t.Parallel()
	stall := &faults{}
	stall.stalled.Store(true)
	f := setup(t, worker.Options{Interceptors: []interceptor.WorkerInterceptor{stall}})
	key := uuid.NewString()
	r := f.commit(key, commitRequest(slot(t, 14)))
	require.Equal(t, receipt.StatusPending, r.Status, "the outcome is not known: no confirmation")
	require.Equal(t, receipt.Reference(key), r.Reference)
	require.Equal(t, workflows.StateUnknown, f.state(key).State)

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.Found, rep.Stuck.Details)
	require.Equal(t, workflows.StateUnknown, f.state(key).State, "told, the saga still waits for its own read of the store")
	stall.stalled.Store(false)
	f.eventually(func() bool { return f.state(key).State == workflows.StateConfirmed }, "the saga read the store")
	f.record(key, "stuck_unknown_signalled")
	got, err := f.saga().Receipt(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, got.Status, "the agent's status call sees the result")
	require.Equal(t, 1, f.bookings())
	f.quiet()
}

func TestReconcileExpiresHoldsAndPurgesContacts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	hold := commitRequest(slot(t, 15))
	_, err := f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "held-1", Intent: hold.Intent,
		ExpectedPolicyVersion: policyVersion, Hold: true}})
	require.NoError(t, err)
	kept := commitRequest(slot(t, 16))
	_, err = f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "contact-1", Intent: kept.Intent,
		ExpectedPolicyVersion: policyVersion, Contact: &booking.Contact{Name: "Ada", Phone: "+33 6 12 34 56 78"}}})
	require.NoError(t, err)
	// Time passes: the hold's expiry and the contact's retention are behind us.
	_, err = f.pool.Exec(f.ctx, "UPDATE booking SET hold_expires_at = now() - interval '1 minute' WHERE request_key = 'held-1'")
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, "UPDATE booking_contact SET retain_until = now() - interval '1 day'")
	require.NoError(t, err)
	// And a booking whose viewing ended three years ago.
	old := commitRequest(slot(t, 17))
	_, err = f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "old-1", Intent: old.Intent,
		ExpectedPolicyVersion: policyVersion}})
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, `UPDATE booking SET starts_at = starts_at - interval '3 years', ends_at = ends_at - interval '3 years'
WHERE request_key = 'old-1'`)
	require.NoError(t, err)

	id, first, rep := f.reconcileRun()
	f.recordRun(id, first, "reconcile_holds_contacts_retention") // through the booking-retention guard
	require.Equal(t, 1, rep.HoldsExpired)
	require.Equal(t, 1, rep.ContactsPurged)
	require.Equal(t, 1, rep.Retired, "the booking past its retention is anonymised")
	_, err = f.acts.Store.Lookup(f.ctx, "old-1")
	require.ErrorIs(t, err, booking.ErrNotFound)
	var erased bool
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT data_key IS NULL FROM vault.contact_key WHERE request_key = 'contact-1'").Scan(&erased))
	require.True(t, erased, "the purge erases the data key with the stored copy")
	b, err := f.acts.Store.Lookup(f.ctx, "held-1")
	require.NoError(t, err)
	require.Equal(t, "expired", string(b.Status))
	var contacts int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_contact").Scan(&contacts))
	require.Zero(t, contacts)
	events, err := f.acts.Store.Events(f.ctx, "contact-1")
	require.NoError(t, err)
	require.Equal(t, "contact_purged", events[len(events)-1].Kind)
	require.NotContains(t, events[len(events)-1].Detail, "+33", "the audit trail keeps no contact data")
	f.quiet()
}

// The only test that touches the schedule: its id is fixed, and the
// Temporal server is shared by the package's tests.
func TestScheduleIsCreatedOnceAndCanBeTriggered(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cfg := app.DefaultConfig()
	cfg.TaskQueue, cfg.ReconcileInterval = f.queue, time.Hour
	// Two worker starts.
	require.NoError(t, app.EnsureSchedule(f.ctx, f.client, cfg))
	cfg.ReconcileInterval = 2 * time.Hour
	require.NoError(t, app.EnsureSchedule(f.ctx, f.client, cfg))
	desc, err := f.client.ScheduleClient().GetHandle(f.ctx, booking.ReconcileScheduleID).Describe(f.ctx)
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, desc.Schedule.Spec.Intervals[0].Every, "updated, not duplicated")
	n := 0
	it, err := f.client.ScheduleClient().List(f.ctx, client.ScheduleListOptions{})
	require.NoError(t, err)
	for it.HasNext() {
		s, err := it.Next()
		require.NoError(t, err)
		if s.ID == booking.ReconcileScheduleID {
			n++
		}
	}
	require.Equal(t, 1, n)

	// A worker start with nothing to check under its zone rules asks for
	// no run; with a booking resolved by older rules, it asks for one.
	asked, err := app.FollowZoneRulesNow(f.ctx, f.client, cfg, f.acts.Store)
	require.NoError(t, err)
	require.False(t, asked)
	f.vancouver()
	f.bookedUnderOldRules(vancouverDay(t), "agent-van")
	asked, err = app.FollowZoneRulesNow(f.ctx, f.client, cfg, f.acts.Store)
	require.NoError(t, err)
	require.True(t, asked)
	actions := func(n int) func() bool {
		return func() bool {
			desc, err := f.client.ScheduleClient().GetHandle(f.ctx, booking.ReconcileScheduleID).Describe(f.ctx)
			return err == nil && desc.Info.NumActions >= n
		}
	}
	f.eventually(actions(1), "the run for the zone rules started")

	sc := f.sagas()
	require.NoError(t, sc.ReconcileNow(f.ctx))
	f.eventually(actions(2), "the triggered run started")
}

func TestOperatorTools(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sc := f.sagas()
	key := f.booked(9)
	f.calendar.Put(agentCal, &calendar.Event{Id: "gym00001", Summary: "gym",
		Start: &calendar.EventDateTime{DateTime: slot(t, 9).Format(time.RFC3339)},
		End:   &calendar.EventDateTime{DateTime: slot(t, 10).Format(time.RFC3339)}})
	f.reconcile()

	att, err := sc.Attention(f.ctx)
	require.NoError(t, err)
	require.Len(t, att.Flags, 1)
	require.Equal(t, key, att.Flags[0].RequestKey)

	tl, err := sc.Timeline(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, "confirmed", string(tl.Booking.Status))
	require.Equal(t, workflows.StateConfirmed, tl.Saga.State)
	require.Len(t, tl.Calendar, 2)
	require.Equal(t, "scheduled", tl.CRM.Status)
	var kinds []string
	for _, e := range tl.Events {
		kinds = append(kinds, e.Kind)
	}
	require.Contains(t, kinds, "drift_flagged")

	_, err = sc.Resolve(f.ctx, att.Flags[0].ID, "the agent skipped the gym")
	require.NoError(t, err)
	_, err = sc.Resolve(f.ctx, att.Flags[0].ID, "again")
	var refusal *sagaclient.Refusal
	require.ErrorAs(t, err, &refusal)
	require.Equal(t, "flag_not_open", string(refusal.Code))
	att, err = sc.Attention(f.ctx)
	require.NoError(t, err)
	require.Empty(t, att.Flags)
}

// A saga that never publishes a status (its workflow tasks failing, say)
// is listed once it has been silent too long.
func TestAttentionListsSilentSagas(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// Started without a call: nothing decided, so nothing published.
	key := uuid.NewString()
	_, err := f.client.ExecuteWorkflow(f.ctx, sagaclient.StartOptions(f.ctx, key, f.queue), booking.BookingWorkflowName,
		workflows.BookingInput{RequestKey: key})
	require.NoError(t, err)
	listed := func(silent time.Duration) bool {
		att, err := desk.New(f.client, f.catalog, desk.Options{Sagas: sagaclient.Options{TaskQueue: f.queue}, Silent: silent}).Attention(f.ctx)
		require.NoError(t, err)
		for _, s := range att.Sagas {
			if s.RequestKey == key {
				return true
			}
		}
		return false
	}
	f.eventually(func() bool { return listed(time.Nanosecond) }, "the silent saga is listed")
	require.False(t, listed(time.Hour), "not before it has been silent that long")
}

func TestMetricsCountCommitsAndDrift(t *testing.T) {
	t.Parallel()
	m := metrics.New(zap.NewNop())
	t.Cleanup(func() { _ = m.Close() })
	f := setup(t)
	f.acts.Metrics = m.Scope()
	key := f.booked(9)
	require.Equal(t, receipt.StatusConflict, f.commit(uuid.NewString(), commitRequest(slot(t, 9))).Status)
	f.deleteByHand(agentCal, key)
	f.reconcile()
	lyon := f.addAgency("lyon")
	r, err := f.saga().Commit(lyon, uuid.NewString(), commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, r.Status)

	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	scrape := func() string {
		res, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	want := []string{
		`bookingsaga_commits_total{agency="default",outcome="confirmed"} 1`,
		`bookingsaga_commits_total{agency="default",outcome="conflict"} 1`,
		`bookingsaga_commits_total{agency="lyon",outcome="confirmed"} 1`,
		`bookingsaga_drift_total{action="repaired",agency="default",category="calendar_missing"} 1`,
		`bookingsaga_commit_latency_bucket`,
	}
	// Tally reports to Prometheus once a second.
	f.eventually(func() bool {
		out := scrape()
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}, "the metrics are exported")
}

func TestReconcileGoesOnPastARefusedItem(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.booked(10)
	f.deleteByHand(agentCal, key)
	_, err := f.acts.Store.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: "contact-2", Intent: commitRequest(slot(t, 12)).Intent,
		ExpectedPolicyVersion: policyVersion, Contact: &booking.Contact{Name: "Ada"}}})
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, "UPDATE booking_contact SET retain_until = now() - interval '1 day'")
	require.NoError(t, err)
	// The calendar refuses the repair once, for good (a 400).
	require.NoError(t, f.calendar.Inject(fakeserver.Fault{Op: "events.update", Times: 1, Status: http.StatusBadRequest, Reason: "badRequest"}))

	rep := f.reconcile()
	require.Equal(t, 1, rep.Calendar.Failed, rep.Calendar.Details)
	require.Equal(t, 1, rep.ContactsPurged, "retention does not wait behind a refused mirror")
	rep = f.reconcile()
	require.Equal(t, 1, rep.Calendar.Missing, "the next run repairs it")
	f.quiet()
}

// The Catalog workflow is retired: the catalogue is written through the
// API, by admin keys, never by whoever reaches Temporal. A "Catalog"
// workflow started with a policy, as the first release's API did, finds
// no worker that runs it, and the store's policy stays as it was.
func TestACatalogWriteThroughTemporalDoesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id := "catalog:" + uuid.NewString()
	forged := map[string]any{"Policy": booking.Policy{Version: "forged", SlotMinutes: 30, OpensAt: 6 * time.Hour, ClosesAt: 22 * time.Hour,
		HoldTTL: 10 * time.Minute, MinNotice: time.Minute}}
	run, err := f.client.ExecuteWorkflow(f.ctx, client.StartWorkflowOptions{ID: id, TaskQueue: f.queue,
		WorkflowRunTimeout: 3 * time.Second}, "Catalog", forged)
	require.NoError(t, err)
	require.Error(t, run.Get(f.ctx, nil), "no worker runs it")
	p, err := f.acts.Store.CurrentPolicy(f.ctx)
	require.NoError(t, err)
	require.Equal(t, policyVersion, p.Version, "the store's policy stands")
}

// Every open saga is compared with the store, not only a first page's:
// with pages of two, all three sagas the store contradicts are told.
func TestReconcileComparesEveryOpenSaga(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var keys []string
	for _, h := range []int{9, 10, 11} {
		keys = append(keys, f.booked(h))
	}
	for _, k := range keys { // cancelled behind the sagas' backs
		_, err := f.acts.Store.Release(f.ctx, store.ReleaseRequest{RequestKey: k})
		require.NoError(t, err)
	}
	rep := f.reconcile()
	require.Equal(t, 3, rep.Stuck.Drifted, rep.Stuck.Details)
	f.quiet()
}

// A ReconcileStuck attempt goes on from the page the last one heartbeated:
// on a deployment too large for one attempt's timeout, each retry moves
// the run on instead of starting again at the first page. Three sagas the
// store contradicts, pages of two, and an attempt that resumes after the
// first page of the open sagas (two told already): only the third is
// told now, and the report counts all three.
func TestReconcileGoesOnFromTheLastPageAnAttemptReached(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, h := range []int{9, 10, 11} {
		key := f.booked(h)
		_, err := f.acts.Store.Release(f.ctx, store.ReleaseRequest{RequestKey: key}) // behind the saga's back
		require.NoError(t, err)
	}
	first, err := f.client.ListWorkflow(f.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: visibility.LiveQuery(agency.Default, f.queue), PageSize: 2})
	require.NoError(t, err)
	require.Len(t, first.GetExecutions(), 2)
	require.NotEmpty(t, first.GetNextPageToken())
	var seen []string
	for _, ex := range first.GetExecutions() {
		seen = append(seen, ex.GetExecution().GetWorkflowId())
	}

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.acts)
	env.SetHeartbeatDetails(booking.StuckProgress{Phase: booking.StuckPhaseOpen, Token: first.GetNextPageToken(),
		Report: booking.StuckReport{Drifted: 2}})
	v, err := env.ExecuteActivity(booking.ActivityReconcileStuck, booking.StuckInput{Before: time.Now().Add(-time.Minute), TaskQueue: f.queue, Limit: 2})
	require.NoError(t, err)
	var rep booking.StuckReport
	require.NoError(t, v.Get(&rep))
	require.Equal(t, 3, rep.Drifted, "two from the attempt before, one now: %v", rep.Details)
	require.Len(t, rep.Details, 1)
	for _, key := range seen {
		require.NotContains(t, rep.Details[0], key, "a saga of the first page was told again")
		require.Equal(t, workflows.StateConfirmed, f.state(key).State, "not told by this attempt")
	}
}
