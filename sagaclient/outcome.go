package sagaclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// RecordOutcome records how the viewing of in.RequestKey went. A worker
// writes it (workflows.Outcome), since an edge's database role writes no
// booking; sending the same outcome again starts nothing new and answers
// what the store holds. A refusal is returned as a *Refusal.
func (c *Client) RecordOutcome(ctx context.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error) {
	if err := in.Validate(); err != nil {
		return booking.OutcomeOutput{}, err
	}
	run, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       booking.OutcomeIDPrefix + in.RequestKey + ":" + string(in.Outcome),
		TaskQueue:                c.opts.TaskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, booking.OutcomeWorkflowName, in)
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

// Reassign moves the confirmed booking of key to agent at the same time,
// as a reschedule does: the new booking first, then the old released in
// the same store transaction, and its caller messaged. The new booking's
// key is derived from key and agent, so that sending the same reassignment
// again is a resend, not a second move.
func (c *Client) Reassign(ctx context.Context, key, agent string) (receipt.Receipt, error) {
	if err := booking.ValidateKey(key); err != nil {
		return receipt.Receipt{}, err
	}
	if agent == "" {
		return receipt.Receipt{}, booking.Rejectf(booking.CodeMissingField, "the agent to reassign %s to is required", key)
	}
	if c.opts.Catalog == nil {
		return receipt.Receipt{}, ErrNoCatalog
	}
	newKey := ReassignKey(key, agent)
	req, err := c.reassignment(ctx, key, newKey, agent)
	if err != nil {
		return receipt.Receipt{}, err
	}
	return c.Reschedule(ctx, key, newKey, req)
}

// reassignment is the booking of key as the store holds it, under agent.
// A booking already moved to newKey (this reassignment, sent before) is
// resent as it was, so its saga or the store answers it.
func (c *Client) reassignment(ctx context.Context, key, newKey, agent string) (booking.CommitRequest, error) {
	d, err := c.opts.Catalog.Decision(ctx, booking.DecisionInput{RequestKey: key})
	if err != nil {
		return booking.CommitRequest{}, fmt.Errorf("reassign %s: %w", key, err)
	}
	b := d.Booking
	switch {
	case !d.Booked():
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeNotBooked, "the store holds no booking under %s to reassign", key)
	case b.Status == booking.StatusReleasedForReschedule && b.ReplacedByRequestKey == newKey:
	case b.Status != booking.StatusConfirmed:
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeWrongState, "%s is %s: only a confirmed booking is reassigned", key, b.Status)
	case b.Intent.AgentID == agent:
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeInvalidReplacement, "%s is already %s's", key, agent)
	}
	p, err := c.opts.Catalog.Policy(ctx)
	if err != nil {
		return booking.CommitRequest{}, fmt.Errorf("reassign %s: %w", key, err)
	}
	in := b.Intent
	in.AgentID, in.AgentPool, in.Replaces = agent, "", ""
	return booking.CommitRequest{Intent: in, ExpectedPolicyVersion: p.Version}, nil
}

// ReassignKey is the request key of the booking that moves key to agent.
func ReassignKey(key, agent string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + agent))
	return "reassign-" + hex.EncodeToString(sum[:16])
}
