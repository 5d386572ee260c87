package app

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// soonPolicy lets a test book a viewing that starts in seconds, so the
// saga's wait for the viewing's end runs inside the test.
const soonPolicy = "showing-policy-soon"

// soon books a viewing that ends in a few seconds, on a resource in a zone
// where it is daytime, so the booking lies within one local day.
func (f *fixture) soon(key string) receipt.Receipt {
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
		PropertyID: "soon-prop", AgentID: "soon-agent", StartsAt: start, EndsAt: start.Add(3 * time.Second), TimeZone: zone}})
	require.Equal(f.t, receipt.StatusConfirmed, r.Status, r.Reason)
	return r
}

func TestASagaStaysOpenUntilTheViewingHasEnded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	booked := f.soon(key)
	var final receipt.Receipt
	require.NoError(t, f.client.GetWorkflow(f.ctx, key, "").Get(f.ctx, &final))
	require.Equal(t, receipt.StatusConfirmed, final.Status)
	require.Equal(t, booked.BookingID, final.BookingID)
	require.False(t, time.Now().Before(*final.EndsAt), "the saga closed before the viewing ended")
	f.record(key, "viewing_ended")
}
