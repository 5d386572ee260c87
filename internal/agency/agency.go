// Package agency holds which agency a call acts for, and carries it: in a
// context from the edge (the agency of the caller's key) through Temporal
// (a header that every workflow and activity started for the call
// carries, Propagator) to the store, which names it on every statement
// and whose row-level security shows nothing of another agency.
package agency

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Agency is one agency (tenant) of a deployment: its number, which the
// store's rows carry, and its id, which keys, workflow ids and the
// operators' search attribute carry.
type Agency struct {
	No int    `json:"no"`
	ID string `json:"id"`
}

// Default is the agency of everything made before agencies, and of a
// deployment that never makes a second.
var Default = Agency{No: 1, ID: "default"}

// IsDefault reports whether a is the default agency.
func (a Agency) IsDefault() bool { return a.No == Default.No }

type ctxKey struct{}

// With makes ctx act for a.
func With(ctx context.Context, a Agency) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// From is the agency ctx acts for: Default when none is named.
func From(ctx context.Context) Agency {
	if a, ok := ctx.Value(ctxKey{}).(Agency); ok {
		return a
	}
	return Default
}

// FromWorkflow is the agency a workflow acts for, from its start's header.
func FromWorkflow(ctx workflow.Context) Agency {
	if a, ok := ctx.Value(ctxKey{}).(Agency); ok {
		return a
	}
	return Default
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
	return inject(From(ctx), w)
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
	return With(ctx, a), nil
}

// ExtractToWorkflow names the headers' agency in a workflow's context.
func (Propagator) ExtractToWorkflow(ctx workflow.Context, r workflow.HeaderReader) (workflow.Context, error) {
	a, ok, err := extract(r)
	if err != nil || !ok {
		return ctx, err
	}
	return workflow.WithValue(ctx, ctxKey{}, a), nil
}

func inject(a Agency, w workflow.HeaderWriter) error {
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

func extract(r workflow.HeaderReader) (Agency, bool, error) {
	p, ok := r.Get(header)
	if !ok {
		return Agency{}, false, nil
	}
	var a Agency
	if err := converter.GetDefaultDataConverter().FromPayload(p, &a); err != nil {
		return Agency{}, false, fmt.Errorf("agency header: %w", err)
	}
	if a.No < 1 || a.ID == "" {
		return Agency{}, false, fmt.Errorf("agency header: no agency in %+v", a)
	}
	return a, true, nil
}
