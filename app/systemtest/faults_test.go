package systemtest

import (
	"context"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
)

// updateCall is an update as it would have gone to Temporal.
type updateCall = func() (client.WorkflowUpdateHandle, error)

// outbound is the one client interceptor the tests break calls to
// Temporal with: a hook, when set, takes the calls of its kind, given
// the call as it would have gone.
type outbound struct {
	interceptor.ClientOutboundInterceptorBase
	updateWithStart func(ctx context.Context, in *interceptor.ClientUpdateWithStartWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error)
	update          func(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput, call updateCall) (client.WorkflowUpdateHandle, error)
}

// hooked is next with o's hooks in its way.
func hooked(next interceptor.ClientOutboundInterceptor, o outbound) *outbound {
	o.Next = next
	return &o
}

func (o *outbound) UpdateWithStartWorkflow(ctx context.Context, in *interceptor.ClientUpdateWithStartWorkflowInput) (client.WorkflowUpdateHandle, error) {
	call := func() (client.WorkflowUpdateHandle, error) { return o.Next.UpdateWithStartWorkflow(ctx, in) }
	if o.updateWithStart == nil {
		return call()
	}
	return o.updateWithStart(ctx, in, call)
}

func (o *outbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	call := func() (client.WorkflowUpdateHandle, error) { return o.Next.UpdateWorkflow(ctx, in) }
	if o.update == nil {
		return call()
	}
	return o.update(ctx, in, call)
}
