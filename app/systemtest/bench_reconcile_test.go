package systemtest

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

var reconcileBookings = flag.Int("reconcile-bookings", 1000, "BenchmarkReconcileRun: how many open bookings")

// BenchmarkReconcileRun measures one reconciliation run, as the schedule
// starts it (a 14-day window, pages of 200), over open bookings: each
// confirmed through its saga, which stays open, and mirrored in the
// calendar and CRM fakes, over 35 property and agent pairs. Nothing has
// drifted, so the run reads everything and changes nothing; what it costs
// is the comparison itself.
//
//	go test ./app/systemtest -run '^$' -bench ReconcileRun -benchtime 3x -reconcile-bookings 10000 -timeout 60m
func BenchmarkReconcileRun(b *testing.B) {
	f := setup(b)
	keys := f.openBookings(*reconcileBookings)
	b.ResetTimer()
	var rep workflows.ReconcileReport
	for range b.N {
		run, err := f.client.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "reconcile-" + uuid.NewString(), TaskQueue: f.queue},
			workflows.Reconcile, workflows.ReconcileInput{})
		require.NoError(b, err)
		require.NoError(b, run.Get(context.Background(), &rep))
	}
	b.StopTimer()
	require.Zero(b, rep.Changed(), "nothing drifted: %v %v", rep.Calendar.Details, rep.Stuck.Details)
	b.ReportMetric(float64(len(keys)), "bookings")
	b.ReportMetric(float64(rep.Pages), "pages/run")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(len(keys))*1000, "µs/booking")
}

// openBookings books n slots through their sagas and waits until every
// one is mirrored: 35 property and agent pairs, each with its calendars,
// every half hour of the policy's hours, from two days ahead.
func (f *fixture) openBookings(n int) []string {
	f.t.Helper()
	ctx := context.Background() // the fixture's context lasts two minutes; this setup may take longer
	const pairs = 35
	for i := range pairs {
		for _, r := range []booking.Resource{
			{ID: fmt.Sprintf("bench-p%02d", i), Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: fmt.Sprintf("bench-p%02d@calendar.test", i)},
			{ID: fmt.Sprintf("bench-a%02d", i), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: fmt.Sprintf("bench-a%02d@calendar.test", i)},
		} {
			require.NoError(f.t, f.acts.Store.UpsertResource(ctx, r))
		}
	}
	reqs := make(chan booking.CommitRequest)
	go func() {
		defer close(reqs)
		for i := range n {
			pair, s := i%pairs, i/pairs
			day, half := 2+s/24, s%24 // 24 half hours from 8:00
			start := slot(f.t, 8).AddDate(0, 0, day-2).Add(time.Duration(half) * 30 * time.Minute)
			req := commitRequest(start)
			req.Intent.PropertyID, req.Intent.AgentID = fmt.Sprintf("bench-p%02d", pair), fmt.Sprintf("bench-a%02d", pair)
			reqs <- req
		}
	}()
	var mu sync.Mutex
	var keys []string
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for req := range reqs {
				key := uuid.NewString()
				r, err := f.saga().Commit(ctx, key, req)
				require.NoError(f.t, err)
				require.Equal(f.t, receipt.StatusConfirmed, r.Status, "%s %s", req.Intent.PropertyID, req.Intent.StartsAt)
				mu.Lock()
				keys = append(keys, key)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Eventually(f.t, func() bool {
		var mirrored int
		require.NoError(f.t, f.pool.QueryRow(ctx,
			"SELECT count(*) FROM booking WHERE provider_event_id IS NOT NULL AND crm_ref IS NOT NULL").Scan(&mirrored))
		return mirrored == n
	}, 30*time.Minute, time.Second, "every booking mirrored")
	return keys
}
