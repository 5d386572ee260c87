package workflows

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Outcome records how a viewing went, in the store, and starts the CRM's
// copy of it (MirrorCRM), which it does not wait for: the staff member is
// answered once the store holds the outcome, and a CRM that is down is
// retried for an hour without them. The booking's saga has usually closed
// by then (it stays open until the viewing ends), so the mirror is a run
// of its own. It runs on a worker so that the API, which starts it,
// writes no booking itself: its database role may not.
func Outcome(ctx workflow.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	var out booking.OutcomeOutput
	err := workflow.ExecuteActivity(storeCtx(ctx), booking.ActivityRecordOutcome, in).Get(ctx, &out)
	// A refusal is the store's answer, not a failed run.
	if rej, ok := rejection(err); ok {
		return booking.OutcomeOutput{Refused: &rej}, nil
	}
	if err != nil {
		return out, err
	}
	scoped := agencyIDs(ctx)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            workflowID(ctx, scoped, booking.OutcomeIDPrefix+"crm:"+in.RequestKey+":"+string(in.Outcome)),
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: childAttributes(ctx, scoped),
	})
	child := workflow.ExecuteChildWorkflow(cctx, MirrorCRM, in.RequestKey)
	// Started is enough; one already running for this outcome reads the
	// store on each try, so it writes what the store holds.
	_ = child.GetChildWorkflowExecution().Get(ctx, nil)
	return out, nil
}

// MirrorCRM brings a booking's CRM record in line with the store, retried
// as every mirror write is (an hour, then the operator's attention).
func MirrorCRM(ctx workflow.Context, key string) error {
	return workflow.ExecuteActivity(mirrorCtx(ctx, Settings{}.WithDefaults().MirrorAttemptTimeout),
		booking.ActivitySyncCRM, booking.KeyInput{RequestKey: key}).Get(ctx, nil)
}
