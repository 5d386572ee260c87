package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Temporal keeps an update it has admitted but no worker has accepted in
// memory only: a server that dies then loses it, while the commit it
// started as a local activity may already be in the store. The saga is
// left OFFERED, with no request, over a key the store has booked. These
// sagas are started as the agent's first call starts them, with the
// update lost.

// TestAnIntentWhoseCommitTemporalLostLapsesIntoTheStoresBooking: at the
// intent's end such a saga reads the store, and answers what it holds,
// not expired.
func TestAnIntentWhoseCommitTemporalLostLapsesIntoTheStoresBooking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mirrorsOK()
	f.storeHolds(stored(key, request(slotStart), booking.StatusConfirmed))
	final := f.run(BookingInput{RequestKey: key, Settings: Settings{IntentTTL: time.Minute}})
	require.Equal(t, receipt.StatusConfirmed, final.Status, "the store booked the key")
	require.NotEmpty(t, final.BookingID)
}

// TestAReconcileNudgeMakesAnOfferedSagaReadTheStore: a nudge (the client
// that found the store's booking under an offered saga sends one) makes
// the saga read the store at once, well before its intent lapses.
func TestAReconcileNudgeMakesAnOfferedSagaReadTheStore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mirrorsOK()
	f.storeHolds(stored(key, request(slotStart), booking.StatusConfirmed))
	f.env.RegisterDelayedCallback(func() { f.env.SignalWorkflow(booking.SignalReconcile, booking.LookupOutput{}) }, time.Second)
	var during BookingState
	f.env.RegisterDelayedCallback(func() { during = f.state() }, 2*time.Second)
	final := f.run(BookingInput{RequestKey: key, Settings: Settings{IntentTTL: time.Hour}})
	require.Equal(t, StateConfirmed, during.State, "a second after the nudge, with an hour before the intent lapses")
	require.Equal(t, receipt.StatusConfirmed, final.Status)
}

// TestAnIntentNobodySentLapsesWhenTheStoreHasNothing: the store's
// authoritative absence leaves the lapse as it was.
func TestAnIntentNobodySentLapsesWhenTheStoreHasNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.env.OnActivity(f.a.Lookup, mock.Anything, forKey(key)).Return(booking.LookupOutput{}, nil).Once()
	final := f.run(BookingInput{RequestKey: key, Settings: Settings{IntentTTL: time.Minute}})
	require.Equal(t, receipt.StatusExpired, final.Status)
}
