package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
)

// CatalogWorkflowName runs one read or write of the store's catalogue
// (availability, resources, the policy) for callers that only hold a
// Temporal client.
const CatalogWorkflowName = "Catalog"

// CatalogRequest names exactly one operation.
type CatalogRequest struct {
	Availability *booking.AvailabilityQuery
	Resource     *booking.Resource
	Policy       *booking.Policy
	// Operator reads and writes.
	Flags    bool
	Timeline string // a request key
	Resolve  *activities.ResolveInput
	// Decision reads what the store decided on a key or a reference.
	Decision *activities.DecisionInput
}

// CatalogResult is the operation's answer.
type CatalogResult struct {
	Availability *booking.Availability
	Flags        []booking.Flag
	Timeline     *activities.Timeline
	Resolved     *booking.Flag
	Decision     *activities.LookupOutput
}

// Catalog runs the one activity the request names. Refusals come back as
// the activity's non-retryable error.
func Catalog(ctx workflow.Context, req CatalogRequest) (CatalogResult, error) {
	var a *activities.Activities
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var out CatalogResult
	switch {
	case req.Availability != nil:
		var av booking.Availability
		if err := workflow.ExecuteActivity(ctx, a.Availability, *req.Availability).Get(ctx, &av); err != nil {
			return out, err
		}
		out.Availability = &av
	case req.Resource != nil:
		return out, workflow.ExecuteActivity(ctx, a.UpsertResource, *req.Resource).Get(ctx, &booking.Resource{})
	case req.Policy != nil:
		return out, workflow.ExecuteActivity(ctx, a.SetPolicy, *req.Policy).Get(ctx, &booking.Policy{})
	case req.Flags:
		var f activities.FlagsOutput
		err := workflow.ExecuteActivity(ctx, a.OpenFlags, activities.FlagsInput{}).Get(ctx, &f)
		out.Flags = f.Flags
		return out, err
	case req.Timeline != "":
		var t activities.Timeline
		err := workflow.ExecuteActivity(ctx, a.BookingTimeline, activities.KeyInput{RequestKey: req.Timeline}).Get(ctx, &t)
		out.Timeline = &t
		return out, err
	case req.Decision != nil:
		var d activities.LookupOutput
		err := workflow.ExecuteActivity(ctx, a.Decision, *req.Decision).Get(ctx, &d)
		out.Decision = &d
		return out, err
	case req.Resolve != nil:
		var f booking.Flag
		err := workflow.ExecuteActivity(ctx, a.ResolveFlag, *req.Resolve).Get(ctx, &f)
		out.Resolved = &f
		return out, err
	default:
		return out, temporal.NewNonRetryableApplicationError("empty catalog request", activities.ErrTypeRejected, nil)
	}
	return out, nil
}
