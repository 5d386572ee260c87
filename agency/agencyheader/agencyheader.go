// Package agencyheader carries the agency a call acts for (package
// agency) through Temporal: a header that every workflow, update, signal
// and activity started for the call carries (Propagator), and the
// workflow's own context, from which the children it starts inherit it.
package agencyheader

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/agency"
)

// wfKey names the agency in a workflow's context.
type wfKey struct{}

// InWorkflow makes a workflow's ctx act for a: the children it starts
// from ctx act for a (Propagator writes their header).
func InWorkflow(ctx workflow.Context, a agency.Agency) workflow.Context {
	return workflow.WithValue(ctx, wfKey{}, a)
}

// FromWorkflow is the agency a workflow acts for, from its start's header.
func FromWorkflow(ctx workflow.Context) agency.Agency {
	if a, ok := ctx.Value(wfKey{}).(agency.Agency); ok {
		return a
	}
	return agency.Default
}

// header is the Temporal header that carries the agency.
const header = "bookingsaga-agency"

// Propagator carries the agency from a client's context into the
// workflows it starts, signals and updates, and from a workflow into the
// activities and children it schedules; an activity's context then names
// it to the store. The default agency travels as no header at all, so
// that histories recorded before agencies and after read alike.
type Propagator struct{}

var _ workflow.ContextPropagator = Propagator{}

// Inject writes ctx's agency into a call's headers.
func (Propagator) Inject(ctx context.Context, w workflow.HeaderWriter) error {
	return inject(agency.From(ctx), w)
}

// InjectFromWorkflow writes the workflow's agency into the headers of
// what it schedules.
func (Propagator) InjectFromWorkflow(ctx workflow.Context, w workflow.HeaderWriter) error {
	return inject(FromWorkflow(ctx), w)
}

// Extract names the headers' agency in an activity's context.
func (Propagator) Extract(ctx context.Context, r workflow.HeaderReader) (context.Context, error) {
	a, ok, err := extract(r)
	if err != nil || !ok {
		return ctx, err
	}
	return agency.With(ctx, a), nil
}

// ExtractToWorkflow names the headers' agency in a workflow's context.
func (Propagator) ExtractToWorkflow(ctx workflow.Context, r workflow.HeaderReader) (workflow.Context, error) {
	a, ok, err := extract(r)
	if err != nil || !ok {
		return ctx, err
	}
	return workflow.WithValue(ctx, wfKey{}, a), nil
}

func inject(a agency.Agency, w workflow.HeaderWriter) error {
	if a.IsDefault() {
		return nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(a)
	if err != nil {
		return fmt.Errorf("agency header: %w", err)
	}
	w.Set(header, p)
	return nil
}

func extract(r workflow.HeaderReader) (agency.Agency, bool, error) {
	p, ok := r.Get(header)
	if !ok {
		return agency.Agency{}, false, nil
	}
	var a agency.Agency
	if err := converter.GetDefaultDataConverter().FromPayload(p, &a); err != nil {
		return agency.Agency{}, false, fmt.Errorf("agency header: %w", err)
	}
	if a.No < 1 || a.ID == "" {
		return agency.Agency{}, false, fmt.Errorf("agency header: no agency in %+v", a)
	}
	return a, true, nil
}

// ScopedInWorkflow is id in the space of the agency the workflow acts for.
func ScopedInWorkflow(ctx workflow.Context, id string) string {
	return agency.WorkflowID(FromWorkflow(ctx), id)
}
