package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Resender sends a call answered pending_reconciliation again with its
// key; *sagaclient.Client is one.
type Resender interface {
	Resend(ctx context.Context, call booking.PendingCall) (receipt.Receipt, error)
}

// settlePending looks at every call answered pending before in.Before
// that the store has not decided: one whose saga has it is the saga's to
// settle (the stuck pass tells it the store's answer); one Temporal never
// got or lost (callLost) is sent again with its key, the
// UNKNOWN rule: look it up, and send again only when authoritatively
// absent. A call is forgotten once decided or handed to its saga; one
// whose resend is pending again waits for the next run.
func (a *Activities) settlePending(ctx context.Context, in booking.StuckInput, prog *booking.StuckProgress) error {
	if prog.Phase > booking.StuckPhasePending || a.Resend == nil {
		return nil
	}
	prog.Phase, prog.Token = booking.StuckPhasePending, nil
	var after *booking.PendingCall
	for {
		page, err := a.Store.PendingCalls(ctx, in.Before, after, max(in.Limit, 1))
		if err != nil {
			return storeError("reconcile pending calls", "", err)
		}
		for _, call := range page {
			if err := a.settleCall(ctx, call, &prog.Report); err != nil {
				return fmt.Errorf("reconcile pending calls: %w", err)
			}
		}
		activity.RecordHeartbeat(ctx, *prog)
		if len(page) < max(in.Limit, 1) {
			prog.Phase++
			return nil
		}
		after = &page[len(page)-1]
	}
}

// settleCall settles one pending call, if it can yet.
func (a *Activities) settleCall(ctx context.Context, call booking.PendingCall, rep *booking.StuckReport) error {
	decided, err := a.callDecided(ctx, call)
	if err != nil || decided {
		return a.forget(ctx, call, err)
	}
	if call.Op == booking.PendingCommit || call.Op == booking.PendingHold {
		lost, err := a.callLost(ctx, call.RequestKey)
		if err != nil || !lost {
			// Its saga has it, or Temporal can't say: not authoritatively absent.
			return a.forget(ctx, call, err)
		}
	}
	r, err := a.Resend.Resend(ctx, call)
	if err != nil || r.Status == receipt.StatusPending {
		// A resend that is a failure or pending again stays noted: the
		// next run tries it, and an operator sees it in the report.
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("pending %s %s: sent again, still undecided", call.Op, call.RequestKey))
		return nil
	}
	rep.Resent++
	rep.Details = appendDetail(rep.Details, fmt.Sprintf("pending %s %s: Temporal never had it; sent again with its key: %s", call.Op, call.RequestKey, r.Status))
	return a.forget(ctx, call, nil)
}

// callLost reports whether Temporal lost a booking call: it has no saga
// for the key, or one still offered. Update with start can keep the start
// and lose the update: Temporal holds an update it has admitted in memory
// until a worker accepts it, and a server that dies then forgets it.
func (a *Activities) callLost(ctx context.Context, key string) (bool, error) {
	_, err := a.Temporal.DescribeWorkflowExecution(ctx, agency.Scoped(ctx, key), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return true, nil
	case err != nil:
		return false, err
	}
	v, err := a.Temporal.QueryWorkflow(ctx, agency.Scoped(ctx, key), "", booking.QueryReceipt, nil)
	if err != nil {
		return false, err
	}
	var r receipt.Receipt
	if err := v.Get(&r); err != nil {
		return false, err
	}
	return r.Status == receipt.StatusOffered, nil
}

// callDecided reports whether the store has decided call: the booking or
// refusal of its key, or, for a cancel, a booking no longer live.
func (a *Activities) callDecided(ctx context.Context, call booking.PendingCall) (bool, error) {
	out, err := a.Lookup(ctx, booking.KeyInput{RequestKey: call.RequestKey})
	if err != nil {
		return false, err
	}
	if call.Op == booking.PendingCancel {
		return !out.Found || !out.Booking.Status.Live(), nil
	}
	return out.Found || out.Refusal != nil, nil
}

// forget settles call in the store, unless err says it can't be yet.
func (a *Activities) forget(ctx context.Context, call booking.PendingCall, err error) error {
	if err != nil {
		return err
	}
	if err := a.Store.SettlePending(ctx, call); err != nil {
		return storeError("settle pending", call.RequestKey, err)
	}
	return nil
}
