package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Attention is what an operator should look at now (booking.Attention).
type Attention = booking.Attention

// SagaSummary is one saga as the search attributes show it.
type SagaSummary = booking.SagaSummary

// Attention lists sagas stuck, unsynced or silent, and open drift flags.
func (c *Client) Attention(ctx context.Context) (Attention, error) {
	query := visibility.AttentionQuery(time.Now().Add(-c.opts.Silent))
	var out Attention
	var page []byte
	for {
		res, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: page})
		if err != nil {
			return Attention{}, fmt.Errorf("attention: %w", err)
		}
		out.Sagas = append(out.Sagas, summaries(res.GetExecutions())...)
		if page = res.GetNextPageToken(); len(page) == 0 {
			break
		}
	}
	if c.opts.Catalog == nil {
		return out, ErrNoCatalog
	}
	flags, err := c.opts.Catalog.OpenFlags(ctx)
	if err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	out.Flags = flags
	if out.OutsideRules, err = c.opts.Catalog.OutsideRules(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	if out.Handoffs, err = c.opts.Catalog.OpenHandoffs(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	if out.ReconcileFailures, err = c.opts.Catalog.ReconcileFailures(ctx); err != nil {
		return out, fmt.Errorf("attention: %w", err)
	}
	return out, nil
}

// RequestHandoff records a caller's request for a person (once, however
// often it is sent) and announces it to the webhooks.
func (c *Client) RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, error) {
	if c.opts.Catalog == nil {
		return booking.Handoff{}, ErrNoCatalog
	}
	out, _, err := c.opts.Catalog.RequestHandoff(ctx, h)
	if err != nil {
		return booking.Handoff{}, fmt.Errorf("request handoff: %w", err)
	}
	return out, nil
}

func summaries(execs []*workflowpb.WorkflowExecutionInfo) []SagaSummary {
	var out []SagaSummary
	for _, ex := range execs {
		sa := ex.GetSearchAttributes().GetIndexedFields()
		s := SagaSummary{RequestKey: ex.GetExecution().GetWorkflowId()}
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
func (c *Client) Timeline(ctx context.Context, key string) (Timeline, error) {
	if c.opts.Catalog == nil {
		return Timeline{}, ErrNoCatalog
	}
	t, err := c.opts.Catalog.Timeline(ctx, key)
	if err != nil {
		return Timeline{}, err
	}
	out := Timeline{Timeline: t}
	v, err := c.tc.QueryWorkflow(ctx, key, "", booking.QueryState)
	switch {
	case notFound(err):
		return out, nil // no saga (any more): the store's side stands alone
	case err != nil:
		return out, fmt.Errorf("timeline %s: saga state: %w", key, err)
	}
	var st workflows.BookingState
	if err := v.Get(&st); err != nil {
		return out, fmt.Errorf("timeline %s: saga state: %w", key, err)
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
func (c *Client) Restore(ctx context.Context, key string) (receipt.Receipt, error) {
	return c.onLost(ctx, key, func(st workflows.BookingState) (booking.LookupOutput, error) {
		if st.State == workflows.StateRescheduled && st.ReplacedBy != "" {
			// A lost move lost its new booking too: restoring that one
			// moves again, releasing this one in the same commit.
			if _, err := c.Restore(ctx, st.ReplacedBy); err != nil && !errors.Is(err, ErrNothingToRestore) {
				return booking.LookupOutput{}, err
			}
		}
		if st.State == workflows.StateCancelled || st.State == workflows.StateRescheduled {
			// The store lost the change, not the booking (store_lost_change).
			return c.opts.Catalog.ReleaseAgain(ctx, *st.Booking, st.ReplacedBy)
		}
		return c.opts.Catalog.Restore(ctx, *st.Booking)
	})
}

// ReleaseLost settles a booking the store lost the other way: the store
// records that it is not booked (booking_lost, with the operator's note),
// which is every answer about the key from then on.
func (c *Client) ReleaseLost(ctx context.Context, key, note string) (receipt.Receipt, error) {
	return c.onLost(ctx, key, func(st workflows.BookingState) (booking.LookupOutput, error) {
		return c.opts.Catalog.ReleaseLost(ctx, *st.Booking, note)
	})
}

// onLost runs decide on the state key's saga holds (which holds a
// booking), and nudges the saga to read the store's answer.
func (c *Client) onLost(ctx context.Context, key string, decide func(workflows.BookingState) (booking.LookupOutput, error)) (receipt.Receipt, error) {
	if c.opts.Catalog == nil {
		return receipt.Receipt{}, ErrNoCatalog
	}
	v, err := c.tc.QueryWorkflow(ctx, key, "", booking.QueryState)
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s: saga state: %w", key, err)
	}
	var st workflows.BookingState
	if err := v.Get(&st); err != nil {
		return receipt.Receipt{}, fmt.Errorf("%s: saga state: %w", key, err)
	}
	if st.Booking == nil {
		return receipt.Receipt{}, fmt.Errorf("%s: %w", key, ErrNothingToRestore)
	}
	out, err := decide(st)
	if err != nil {
		return receipt.Receipt{}, err
	}
	_ = c.tc.SignalWorkflow(ctx, key, "", booking.SignalReconcile, out) // a nudge: the saga reads the store
	r, _ := workflows.StoreReceipt(key, out)
	return r, nil
}

// Resolve closes a drift flag with a note, recorded in the event log.
func (c *Client) Resolve(ctx context.Context, flagID int64, note string) (booking.Flag, error) {
	if c.opts.Catalog == nil {
		return booking.Flag{}, ErrNoCatalog
	}
	return c.opts.Catalog.ResolveFlag(ctx, flagID, note)
}

// ReconcileNow triggers the reconciliation schedule: at once, or right
// after the run under way (the schedule itself skips overlapping runs; an
// operator's request is queued rather than dropped).
func (c *Client) ReconcileNow(ctx context.Context) error {
	err := c.tc.ScheduleClient().GetHandle(ctx, booking.ReconcileScheduleID).Trigger(ctx,
		client.ScheduleTriggerOptions{Overlap: enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE})
	if err != nil {
		return fmt.Errorf("trigger %s: %w", booking.ReconcileScheduleID, err)
	}
	return nil
}

// StartWebhooks makes sure the dispatcher of a webhook endpoint runs; one
// already running is left as it is.
func (c *Client) StartWebhooks(ctx context.Context, endpointID string) error {
	_, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: booking.WebhooksIDPrefix + endpointID, TaskQueue: c.opts.TaskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING},
		booking.WebhooksWorkflowName, workflows.WebhooksInput{EndpointID: endpointID})
	if err != nil {
		return fmt.Errorf("start webhooks %s: %w", endpointID, err)
	}
	return nil
}

// CalledBack closes a handoff once its caller was called back.
func (c *Client) CalledBack(ctx context.Context, id int64, note string) (booking.Handoff, error) {
	if c.opts.Catalog == nil {
		return booking.Handoff{}, ErrNoCatalog
	}
	return c.opts.Catalog.ResolveHandoff(ctx, id, note)
}
