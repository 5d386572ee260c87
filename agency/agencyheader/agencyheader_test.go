package agencyheader

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/agency"
)

var lyon = agency.Agency{No: 7, ID: "lyon"}

// headers is a call's headers, as the SDK keeps them.
type headers map[string]*commonpb.Payload

func (h headers) Set(k string, p *commonpb.Payload) { h[k] = p }

func (h headers) Get(k string) (*commonpb.Payload, bool) { p, ok := h[k]; return p, ok }

func (h headers) ForEachKey(fn func(string, *commonpb.Payload) error) error {
	for k, p := range h {
		if err := fn(k, p); err != nil {
			return err
		}
	}
	return nil
}

// startedFor is the header a client acting for a writes on a start.
func startedFor(t *testing.T, a agency.Agency) *commonpb.Header {
	t.Helper()
	h := headers{}
	require.NoError(t, Propagator{}.Inject(agency.With(context.Background(), a), h))
	return &commonpb.Header{Fields: h}
}

// seen is what a saga and its activity each find they act for.
type seen struct{ Workflow, Activity agency.Agency }

func actsFor(ctx context.Context) (agency.Agency, error) { return agency.From(ctx), nil }

func saga(ctx workflow.Context) (seen, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10e9})
	var s seen
	s.Workflow = FromWorkflow(ctx)
	err := workflow.ExecuteActivity(ctx, actsFor).Get(ctx, &s.Activity)
	return s, err
}

func run(t *testing.T, h *commonpb.Header) (seen, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetContextPropagators([]workflow.ContextPropagator{Propagator{}})
	if h != nil {
		env.SetHeader(h)
	}
	env.RegisterActivity(actsFor)
	env.ExecuteWorkflow(saga)
	if err := env.GetWorkflowError(); err != nil {
		return seen{}, err
	}
	var s seen
	require.NoError(t, env.GetWorkflowResult(&s))
	return s, nil
}

// The agency a client names on a start reaches the saga and, through it,
// every activity: the store's statements then name it.
func TestAnActivityActsForTheAgencyItsSagaWasStartedFor(t *testing.T) {
	t.Parallel()
	s, err := run(t, startedFor(t, lyon))
	require.NoError(t, err)
	require.Equal(t, seen{Workflow: lyon, Activity: lyon}, s)
}

// A saga started with no agency (every saga before agencies, and every
// saga of the default agency) acts for the default agency, which travels
// as no header: histories read alike before and after.
func TestTheDefaultAgencyTravelsAsNoHeader(t *testing.T) {
	t.Parallel()
	require.Empty(t, startedFor(t, agency.Default).Fields)
	s, err := run(t, nil)
	require.NoError(t, err)
	require.Equal(t, seen{Workflow: agency.Default, Activity: agency.Default}, s)
}

// A header that names no agency is refused, never read as the default.
func TestAHeaderWithoutAnAgencyIsRefused(t *testing.T) {
	t.Parallel()
	p, err := converter.GetDefaultDataConverter().ToPayload(agency.Agency{ID: "lyon"})
	require.NoError(t, err)
	_, err = Propagator{}.Extract(context.Background(), headers{header: p})
	require.ErrorContains(t, err, "no agency")
}
