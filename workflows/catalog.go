package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// CatalogRequest names exactly one operation.
type CatalogRequest struct {
	Availability *booking.AvailabilityQuery
	Resource     *booking.Resource
	Policy       *booking.Policy
	// Operator reads and writes.
	Flags    bool
	Timeline string // a request key
	Resolve  *booking.ResolveInput
	// Decision reads what the store decided on a key or a reference.
	Decision *booking.DecisionInput
}

// CatalogResult is the operation's answer.
type CatalogResult struct {
	Availability *booking.Availability
	Flags        []booking.Flag
	Timeline     *booking.Timeline
	Resolved     *booking.Flag
	Decision     *booking.LookupOutput
}

// Catalog runs the one activity the request names. Refusals come back as
// the activity's non-retryable error. Nothing in this build starts it: the
// API and the CLI read through internal/catalog in their own process. It
// stays registered so that API processes of v0.1.0 still get answers
// during a rollout (workers are upgraded first), and goes in the release
// after.
func Catalog(ctx workflow.Context, req CatalogRequest) (CatalogResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var out CatalogResult
	switch {
	case req.Availability != nil:
		var av booking.Availability
		if err := workflow.ExecuteActivity(ctx, booking.ActivityAvailability, *req.Availability).Get(ctx, &av); err != nil {
			return out, err
		}
		out.Availability = &av
	case req.Resource != nil:
		return out, workflow.ExecuteActivity(ctx, booking.ActivityUpsertResource, *req.Resource).Get(ctx, &booking.Resource{})
	case req.Policy != nil:
		return out, workflow.ExecuteActivity(ctx, booking.ActivitySetPolicy, *req.Policy).Get(ctx, &booking.Policy{})
	case req.Flags:
		var f booking.FlagsOutput
		err := workflow.ExecuteActivity(ctx, booking.ActivityOpenFlags, booking.FlagsInput{}).Get(ctx, &f)
		out.Flags = f.Flags
		return out, err
	case req.Timeline != "":
		var t booking.Timeline
		err := workflow.ExecuteActivity(ctx, booking.ActivityBookingTimeline, booking.KeyInput{RequestKey: req.Timeline}).Get(ctx, &t)
		out.Timeline = &t
		return out, err
	case req.Decision != nil:
		var d booking.LookupOutput
		err := workflow.ExecuteActivity(ctx, booking.ActivityDecision, *req.Decision).Get(ctx, &d)
		out.Decision = &d
		return out, err
	case req.Resolve != nil:
		var f booking.Flag
		err := workflow.ExecuteActivity(ctx, booking.ActivityResolveFlag, *req.Resolve).Get(ctx, &f)
		out.Resolved = &f
		return out, err
	default:
		return out, temporal.NewNonRetryableApplicationError("empty catalog request", booking.ErrTypeRejected, nil)
	}
	return out, nil
}
