package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A release of a booking whose saga is gone is the store's Release,
// retried until the store answers, and its answer is the store's.
func TestReleaseGoneAnswersTheStoresRelease(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.env.RegisterWorkflow(ReleaseGone)
	released := stored("k-gone", request(slotStart), booking.StatusCancelled)
	f.env.OnActivity(f.a.Release, mock.Anything, booking.ReleaseInput{RequestKey: "k-gone"}).Return(booking.LookupOutput{}, errors.New("connection reset")).Once()
	f.env.OnActivity(f.a.Release, mock.Anything, booking.ReleaseInput{RequestKey: "k-gone"}).Return(booking.LookupOutput{Found: true, Booking: released}, nil).Once()
	f.env.ExecuteWorkflow(ReleaseGone, "k-gone")
	require.NoError(t, f.env.GetWorkflowError())
	var out booking.LookupOutput
	require.NoError(t, f.env.GetWorkflowResult(&out))
	require.True(t, out.Found)
	require.Equal(t, booking.StatusCancelled, out.Booking.Status)
}
