// Package crmcontract is the contract every CRM adapter keeps, as
// calendartest is the calendars': the same cases, in one place, run by
// each adapter's tests against the adapter on its fake (crm.HTTP on
// crmtest, hubspot on hubspottest). What only one CRM does (the generic
// one's Idempotency-Key, HubSpot's limits) stays in that adapter's tests.
package crmcontract

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Fake is an adapter on its fake, as the suite drives it.
type Fake struct {
	// CRM is the adapter, pointed at the fake; WrongToken is one whose
	// credentials the fake refuses.
	CRM, WrongToken crm.CRM
	// UpsertOp is the fake's name for the write.
	UpsertOp string
	Inject   func(fakeserver.Fault) error
	Calls    func(op string) int
	// Count is how many records the fake holds.
	Count func() int
	// Delete removes a booking's record as a person in the CRM would.
	Delete func(bookingID string)
}

func viewing(id string) crm.Viewing {
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	return crm.Viewing{BookingID: "b-" + id, RequestKey: "k-" + id, PropertyRef: "paris-11", AgentRef: "agent-00",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris", Status: crm.StatusScheduled,
		Title: "Visite : Paris 11e avec Claire"}
}

// Run runs the contract; setup makes a fresh Fake for each case.
func Run(t *testing.T, setup func(t *testing.T) Fake) {
	cases := map[string]func(*testing.T, Fake){
		"a reply dropped after the save gives one record": lostReply,
		"an upsert again changes nothing":                 upsertAgain,
		"every status and outcome reads back as written":  statuses,
		"concurrent upserts leave one record":             concurrent,
		"a record deleted by hand is written again":       deletedByHand,
		"a correction lands over a stale write":           correction,
		"a refusal of the credentials is final":           wrongToken,
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c(t, setup(t))
		})
	}
}

func lostReply(t *testing.T, f Fake) {
	ctx := context.Background()
	require.NoError(t, f.Inject(fakeserver.Fault{Op: f.UpsertOp, Times: 1, DropAfterSave: true}))
	v := viewing("lost")
	rec, err := f.CRM.Upsert(ctx, v, 0)
	require.NoError(t, err)
	require.Equal(t, v, rec.Viewing)
	require.Equal(t, 2, f.Calls(f.UpsertOp), "sent again after the lost reply")
	require.Equal(t, 1, f.Count(), "one record, not two")
}

func upsertAgain(t *testing.T, f Fake) {
	ctx := context.Background()
	v := viewing("again")
	first, err := f.CRM.Upsert(ctx, v, 0)
	require.NoError(t, err)
	second, err := f.CRM.Upsert(ctx, v, 0)
	require.NoError(t, err)
	require.Equal(t, first.ID, second.ID)
	got, err := f.CRM.Get(ctx, v.BookingID)
	require.NoError(t, err)
	require.Equal(t, v, got.Viewing)
	require.Equal(t, 1, f.Count())
}

// statuses moves one record through every state the store gives a
// viewing, each read back as written: what reconciliation compares.
func statuses(t *testing.T, f Fake) {
	ctx := context.Background()
	v := viewing("moves")
	attended, noShow, agency := v, v, v
	attended.Outcome, noShow.Outcome, agency.Outcome = "attended", "no_show", "cancelled_by_agency"
	cancelledByAgency := v.Cancelled()
	cancelledByAgency.Outcome = "cancelled_by_agency"
	var read crm.Record
	for _, want := range []crm.Viewing{v, attended, noShow, agency, v.RescheduledTo("k-next"), v.Cancelled(), cancelledByAgency, v} {
		// Over the version last read, as reconciliation writes: the last
		// state is the first one again.
		_, err := f.CRM.Upsert(ctx, want, read.Version)
		require.NoError(t, err)
		read, err = f.CRM.Get(ctx, v.BookingID)
		require.NoError(t, err)
		require.Equal(t, want, read.Viewing)
	}
	_, err := f.CRM.Get(ctx, "b-unknown")
	require.ErrorIs(t, err, crm.ErrNotFound)
}

func concurrent(t *testing.T, f Fake) {
	ctx := context.Background()
	v := viewing("race")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = f.CRM.Upsert(ctx, v, 0) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1, f.Count())
}

func deletedByHand(t *testing.T, f Fake) {
	ctx := context.Background()
	v := viewing("gone")
	_, err := f.CRM.Upsert(ctx, v, 0)
	require.NoError(t, err)
	f.Delete(v.BookingID)
	_, err = f.CRM.Get(ctx, v.BookingID)
	require.ErrorIs(t, err, crm.ErrNotFound)
	_, err = f.CRM.Upsert(ctx, v, crm.Absent) // as reconciliation writes what it found missing
	require.NoError(t, err)
	got, err := f.CRM.Get(ctx, v.BookingID)
	require.NoError(t, err)
	require.Equal(t, v, got.Viewing)
}

// correction: a stale write (a scheduled state landing after the
// cancellation) is corrected by writing the cancellation again over the
// version reconciliation read.
func correction(t *testing.T, f Fake) {
	ctx := context.Background()
	v := viewing("stale")
	_, err := f.CRM.Upsert(ctx, v.Cancelled(), 0)
	require.NoError(t, err)
	stale, err := f.CRM.Upsert(ctx, v, 0)
	require.NoError(t, err)
	_, err = f.CRM.Upsert(ctx, v.Cancelled(), stale.Version)
	require.NoError(t, err)
	got, err := f.CRM.Get(ctx, v.BookingID)
	require.NoError(t, err)
	require.Equal(t, crm.StatusCancelled, got.Status)
}

func wrongToken(t *testing.T, f Fake) {
	_, err := f.WrongToken.Upsert(context.Background(), viewing("who"), 0)
	require.Error(t, err)
	require.True(t, crm.Permanent(err), "not retried: %v", err)
	require.Zero(t, f.Count())
}
