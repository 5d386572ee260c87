// Package yardstick holds the workflows the soak measures Temporal by,
// beside the bookings on the same server: what the engine does with none
// of bookingsaga's work.
package yardstick

import (
	"context"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/internal/visibility"
)

// The yardsticks' names, and the update each answers.
const (
	NoopWorkflow  = "SoakNoop"
	ShapeWorkflow = "SoakSagaShape"
	Update        = "answer"
)

// Register puts both yardsticks on w.
func Register(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(Noop, workflow.RegisterOptions{Name: NoopWorkflow})
	w.RegisterWorkflowWithOptions(SagaShape, workflow.RegisterOptions{Name: ShapeWorkflow})
}

// Noop is the engine's floor: it answers its update and ends.
func Noop(ctx workflow.Context) error {
	done := false
	if err := workflow.SetUpdateHandler(ctx, Update, func(workflow.Context) error { done = true; return nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done && workflow.AllHandlersFinished(ctx) })
}

// SagaShape makes Temporal do what a confirmed, mirrored booking makes
// it do, event for event (TestTheSagasShapeWritesWhatABookingWrites), with
// nothing of bookingsaga's in between: a version marker, the update
// answered after one local activity (the commit), a 1 ms timer ending that
// workflow task, two local activities in the next (the mirrors), the
// operators' search attributes, and a timer for the viewing ahead. Its
// saturation is the most a booking could reach were the product free, so
// the soak can say how much of the gap to the no-op is the saga's shape.
func SagaShape(ctx workflow.Context) error {
	_ = workflow.GetVersion(ctx, "saga-shape", workflow.DefaultVersion, 1)
	answered := false
	if err := workflow.SetUpdateHandler(ctx, Update, func(ctx workflow.Context) error {
		defer func() { answered = true }()
		return workflow.ExecuteLocalActivity(localCtx(ctx), nothing).Get(ctx, nil)
	}); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return answered }); err != nil {
		return err
	}
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		return err
	}
	cal, crm := workflow.ExecuteLocalActivity(localCtx(ctx), nothing), workflow.ExecuteLocalActivity(localCtx(ctx), nothing)
	if err := cal.Get(ctx, nil); err != nil {
		return err
	}
	if err := crm.Get(ctx, nil); err != nil {
		return err
	}
	// As many attributes as a booking publishes, so the visibility write
	// is as large; the status names the yardstick for an operator.
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if err := workflow.UpsertTypedSearchAttributes(ctx, visibility.AttrStatus.ValueSet("SOAK_YARDSTICK"),
		visibility.AttrReference.ValueSet(id), visibility.AttrCalendarSynced.ValueSet(true), visibility.AttrCRMSynced.ValueSet(true),
		visibility.AttrProperty.ValueSet(id), visibility.AttrAgent.ValueSet(id), visibility.AttrSlotStart.ValueSet(workflow.Now(ctx))); err != nil {
		return err
	}
	return workflow.Sleep(ctx, 30*24*time.Hour) // a booking's saga stays open until its viewing
}

func localCtx(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
}

// nothing stands for an activity's work.
func nothing(context.Context) error { return nil }
