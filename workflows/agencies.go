package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/agency/agencyheader"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
)

// workflowID is the workflow id of id (a request key, a companion's id)
// in the space of the agency the workflow acts for: the child it starts
// or the saga it signals is its own agency's.
func workflowID(ctx workflow.Context, scoped bool, id string) string {
	if !scoped {
		return id
	}
	return agencyheader.ScopedInWorkflow(ctx, id)
}

// childAttributes are the search attributes a child starts with: its
// agency's, as every workflow an agency's call starts has.
func childAttributes(ctx workflow.Context, scoped bool) temporal.SearchAttributes {
	if !scoped {
		return temporal.SearchAttributes{}
	}
	return visibility.Agency(agencyheader.FromWorkflow(ctx))
}

// agencyIDs reports whether the workflow names its children and the
// sagas it signals in its agency's space (changeAgencyIDs). For the
// default agency both branches name the same ids.
func agencyIDs(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, changeAgencyIDs, workflow.DefaultVersion, 1) == 1
}
