package desk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Attention is what an operator should look at now (booking.Attention).
type Attention = booking.Attention

// SagaSummary is one saga as the search attributes show it.
type SagaSummary = booking.SagaSummary

// Attention lists the sagas of ctx's agency stuck, unsynced or silent,
// and its open drift flags.
func (d *Desk) Attention(ctx context.Context) (Attention, error) {
	a := agency.From(ctx)
	query := visibility.AttentionQuery(a, time.Now().Add(-d.opts.Silent))
	var out Attention
	var page []byte
	for {
		res, err := d.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: page})
		if err != nil {
			return Attention{}, fmt.Errorf("attention: %w", err)
		}
		out.Sagas = append(out.Sagas, summaries(a, res.GetExecutions())...)
		if page = res.GetNextPageToken(); len(page) == 0 {
			break
		}
	}
	flags, err := d.catalog.OpenFlags(ctx)
	if err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	out.Flags = flags
	if out.OutsideRules, err = d.catalog.OutsideRules(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	if out.Handoffs, err = d.catalog.OpenHandoffs(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	if out.ReconcileFailures, err = d.catalog.ReconcileFailures(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	return out, nil
}

// RequestHandoff records a caller's request for a person (once, however
// often it is sent) and announces it to the webhooks.
func (d *Desk) RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, error) {
	out, _, err := d.catalog.RequestHandoff(ctx, h)
	if err != nil {
		return booking.Handoff{}, fmt.Errorf("request handoff: %w", err)
	}
	return out, nil
}

func summaries(a agency.Agency, execs []*workflowpb.WorkflowExecutionInfo) []SagaSummary {
	var out []SagaSummary
	for _, ex := range execs {
		sa := ex.GetSearchAttributes().GetIndexedFields()
		key, _ := agency.Unscoped(a, ex.GetExecution().GetWorkflowId())
		s := SagaSummary{RequestKey: key}
		decode := func(name string, v any) {
			if p, ok := sa[name]; ok {
				_ = converter.GetDefaultDataConverter().FromPayload(p, v)
			}
		}
		decode(visibility.AttrStatus.GetName(), &s.Status)
		decode(visibility.AttrProperty.GetName(), &s.Property)
		decode(visibility.AttrCalendarSynced.GetName(), &s.CalendarSynced)
		decode(visibility.AttrCRMSynced.GetName(), &s.CRMSynced)
		if _, ok := sa[visibility.AttrCallerNotified.GetName()]; ok {
			s.CallerNotified = new(bool)
			decode(visibility.AttrCallerNotified.GetName(), s.CallerNotified)
		}
		out = append(out, s)
	}
	return out
}

// Timeline is one booking's store log, saga state, calendar and CRM.
type Timeline struct {
	booking.Timeline
	// Saga is the workflow's state; nil when it is gone (retention).
	Saga *workflows.BookingState
}

// Timeline shows one booking as every system sees it.
func (d *Desk) Timeline(ctx context.Context, key string) (Timeline, error) {
	t, err := d.catalog.Timeline(ctx, key)
	if err != nil {
		return Timeline{}, err
	}
	out := Timeline{Timeline: t}
	st, err := d.State(ctx, key)
	switch {
	case errors.Is(err, sagaclient.ErrNotFound):
		return out, nil // no saga (any more): the store's side stands alone
	case err != nil:
		return out, fmt.Errorf("timeline %s: %w", key, err)
	}
	out.Saga = &st
	return out, nil
}

// ErrNothingToRestore means the key's saga holds no booking to restore.
var ErrNothingToRestore = errors.New("no booking to restore: the saga holds none (see ops timeline)")

// Restore brings back a booking the store lost (reconciliation flags it
// store_lost_booking), from what its saga holds: the store decides it
// like any commit, under the key and booking id the caller was given, and
// its answer is the one returned. For a change the store lost
// (store_lost_change: the saga let the booking go, the store holds it
// live) it releases the booking again. The saga is then told to read the
// store.
func (d *Desk) Restore(ctx context.Context, key string) (receipt.Receipt, error) {
	return d.onLost(ctx, key, func(st workflows.BookingState) (booking.LookupOutput, error) {
		if st.State == workflows.StateRescheduled && st.ReplacedBy != "" {
			// A lost move lost its new booking too: restoring that one
			// moves again, releasing this one in the same commit.
			if _, err := d.Restore(ctx, st.ReplacedBy); err != nil && !errors.Is(err, ErrNothingToRestore) {
				return booking.LookupOutput{}, err
			}
		}
		if st.State == workflows.StateCancelled || st.State == workflows.StateRescheduled {
			// The store lost the change, not the booking (store_lost_change).
			return d.catalog.ReleaseAgain(ctx, *st.Booking, st.ReplacedBy)
		}
		return d.catalog.Restore(ctx, *st.Booking)
	})
}

// ReleaseLost settles a booking the store lost the other way: the store
// records that it is not booked (booking_lost, with the operator's note),
// which is every answer about the key from then on.
func (d *Desk) ReleaseLost(ctx context.Context, key, note string) (receipt.Receipt, error) {
	return d.onLost(ctx, key, func(st workflows.BookingState) (booking.LookupOutput, error) {
		return d.catalog.ReleaseLost(ctx, *st.Booking, note)
	})
}

// onLost runs decide on the state key's saga holds (which holds a
// booking), and nudges the saga to read the store's answer.
func (d *Desk) onLost(ctx context.Context, key string, decide func(workflows.BookingState) (booking.LookupOutput, error)) (receipt.Receipt, error) {
	st, err := d.State(ctx, key)
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s: %w", key, err)
	}
	if st.Booking == nil {
		return receipt.Receipt{}, fmt.Errorf("%s: %w", key, ErrNothingToRestore)
	}
	out, err := decide(st)
	if err != nil {
		return receipt.Receipt{}, err
	}
	_ = d.tc.SignalWorkflow(ctx, agency.Scoped(ctx, key), "", booking.SignalReconcile, out) // a nudge: the saga reads the store
	r, _ := workflows.StoreReceipt(key, out)
	return r, nil
}

// Resolve closes a drift flag with a note, recorded in the event log.
func (d *Desk) Resolve(ctx context.Context, flagID int64, note string) (booking.Flag, error) {
	return d.catalog.ResolveFlag(ctx, flagID, note)
}

// CalledBack closes a handoff once its caller was called back.
func (d *Desk) CalledBack(ctx context.Context, id int64, note string) (booking.Handoff, error) {
	return d.catalog.ResolveHandoff(ctx, id, note)
}
