package sagaclient

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// joined starts id for ctx's agency on queue, or joins its run.
func joined(ctx context.Context, id, queue string) client.StartWorkflowOptions {
	o := client.StartWorkflowOptions{TaskQueue: queue, WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	o.ID, o.TypedSearchAttributes, o.Priority = visibility.ForStart(ctx, id)
	return o
}

// StartOptions are how every booking saga is started: the workflow id is
// the request key in the space of ctx's agency, a running saga is joined
// (USE_EXISTING), and a closed one is never started again
// (REJECT_DUPLICATE), so a key books at most once on Temporal's side too.
// The store's unique key outlasts retention.
func StartOptions(ctx context.Context, requestKey, taskQueue string) client.StartWorkflowOptions {
	o := client.StartWorkflowOptions{
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
	o.ID, o.TypedSearchAttributes, o.Priority = visibility.ForStart(ctx, requestKey)
	return o
}

// updateWithStart sends update with Update-with-Start: the first call
// creates the saga, every duplicate joins it and gets the same receipt. A
// key whose saga has closed gets its final receipt back.
func updateWithStart(ctx context.Context, c client.Client, taskQueue string, in workflows.BookingInput, update string, req booking.CommitRequest) (receipt.Receipt, error) {
	opts := StartOptions(ctx, in.RequestKey, taskQueue)
	opts.StaticSummary, opts.StaticDetails = workflows.Summary(in.RequestKey, req.Intent), workflows.StaticDetails(req)
	op := c.NewWithStartWorkflowOperation(opts, booking.BookingWorkflowName, in)
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{
			// The start's id, which the server would take anyway: named,
			// the SDK hands it to the codec with the arguments, which are
			// then sealed under the agency's payload key.
			WorkflowID:   opts.ID,
			UpdateName:   update,
			Args:         []any{req},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return queryReceipt(ctx, c, in.RequestKey, &req)
	}
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s %s: %w", update, in.RequestKey, err)
	}
	var r receipt.Receipt
	if err := h.Get(ctx, &r); err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s %s: %w", update, in.RequestKey, err)
	}
	return r, nil
}

// queryReceipt reads the current receipt of a key's saga, open or closed.
// With req set, a different intent under the key is answered
// request_key_reused.
func queryReceipt(ctx context.Context, c client.Client, requestKey string, req *booking.CommitRequest) (receipt.Receipt, error) {
	v, err := c.QueryWorkflow(ctx, agency.Scoped(ctx, requestKey), "", booking.QueryReceipt, req)
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("receipt %s: %w", requestKey, err)
	}
	var r receipt.Receipt
	if err := v.Get(&r); err != nil {
		return receipt.Receipt{}, fmt.Errorf("receipt %s: %w", requestKey, err)
	}
	return r, nil
}

// update sends cancel or reschedule to a key's saga. A saga that has
// closed (or that Temporal no longer keeps) is a *serviceerror.NotFound:
// what that means depends on the update, so the caller answers it.
func update(ctx context.Context, c client.Client, requestKey, name string, arg any) (receipt.Receipt, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: agency.Scoped(ctx, requestKey), UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s %s: %w", name, requestKey, err)
	}
	var r receipt.Receipt
	if err := h.Get(ctx, &r); err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s %s: %w", name, requestKey, err)
	}
	return r, nil
}

// KeyByReference finds the request key of ctx's agency whose saga carries
// the reference a caller quotes. It is for keys the store has not decided yet (pending):
// the store answers for every decided key.
func (c *Client) KeyByReference(ctx context.Context, ref string) (string, error) {
	a := agency.From(ctx)
	query := visibility.ReferenceQuery(a, ref)
	res, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1})
	if err != nil {
		return "", fmt.Errorf("key by reference %s: %w", ref, err)
	}
	if len(res.GetExecutions()) == 0 {
		return "", fmt.Errorf("key by reference %s: %w", ref, ErrNotFound)
	}
	key, _ := agency.Unscoped(a, res.GetExecutions()[0].GetExecution().GetWorkflowId())
	return key, nil
}

// State is the saga's whole state, as an operator's timeline shows it;
// ErrNotFound when Temporal has no saga for key.
func (c *Client) State(ctx context.Context, key string) (workflows.BookingState, error) {
	v, err := c.tc.QueryWorkflow(ctx, agency.Scoped(ctx, key), "", booking.QueryState)
	if notFound(err) {
		err = ErrNotFound
	}
	if err != nil {
		return workflows.BookingState{}, fmt.Errorf("saga state %s: %w", key, err)
	}
	var st workflows.BookingState
	if err := v.Get(&st); err != nil {
		return workflows.BookingState{}, fmt.Errorf("saga state %s: %w", key, err)
	}
	return st, nil
}
