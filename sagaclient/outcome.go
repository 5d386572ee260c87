package sagaclient

import (
	"context"
	"fmt"

	"github.com/bookingsaga/bookingsaga/booking"
)

// RecordOutcome records how the viewing of in.RequestKey went. A worker
// writes it (workflows.Outcome), since an edge's database role writes no
// booking; sending the same outcome again starts nothing new and answers
// what the store holds. A refusal is returned as a *Refusal.
func (c *Client) RecordOutcome(ctx context.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	if err := in.Validate(); err != nil {
		return booking.OutcomeOutput{}, err
	}
	run, err := c.tc.ExecuteWorkflow(ctx, joined(ctx, booking.OutcomeIDPrefix+in.RequestKey+":"+string(in.Outcome), c.opts.TaskQueue),
		booking.OutcomeWorkflowName, in)
	if err != nil {
		return booking.OutcomeOutput{}, fmt.Errorf("record outcome of %s: %w", in.RequestKey, err)
	}
	var out booking.OutcomeOutput
	if err := run.Get(ctx, &out); err != nil {
		return booking.OutcomeOutput{}, fmt.Errorf("record outcome of %s: %w", in.RequestKey, err)
	}
	if out.Refused != nil {
		return booking.OutcomeOutput{}, out.Refused
	}
	return out, nil
}
