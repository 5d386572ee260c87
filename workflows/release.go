package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// ReleaseGone cancels, in the store, the booking of key whose saga
// Temporal no longer has (it closed after the viewing, or Temporal lost
// it): a worker releases it if it is live and still to come, and the
// answer is the store's. It runs on a worker so that the API, which
// starts it, writes no booking itself: its database role may not. The
// reconciliation run then brings the calendar and the CRM in line.
func ReleaseGone(ctx workflow.Context, key string) (booking.LookupOutput, error) {
	var out booking.LookupOutput
	err := workflow.ExecuteActivity(storeCtx(ctx), booking.ActivityRelease, booking.ReleaseInput{RequestKey: key}).Get(ctx, &out)
	return out, err
}

// Withdraw records, in the store, a caller's cancel of key when nothing
// decided key yet and its booking call is still pending (Temporal never
// got it): the cancel is then the key's decision, so reconciliation's
// resend of that call books nothing. It runs on a worker for the reason
// ReleaseGone does.
func Withdraw(ctx workflow.Context, key string) (booking.LookupOutput, error) {
	var out booking.LookupOutput
	err := workflow.ExecuteActivity(storeCtx(ctx), booking.ActivityWithdraw, booking.KeyInput{RequestKey: key}).Get(ctx, &out)
	return out, err
}
