// Package desk is the service's one door to its bookings: the public saga
// client's calls (sagaclient), each answer checked against the store's
// decision on its key, since the store decides and no answer contradicts
// it; a conflict's alternatives; the calls answered pending noted for
// reconciliation; and the operator's ops, restores and hand-offs. The
// agent API, the CLI and the fault suite use it; an agent backend outside
// the module uses sagaclient alone.
package desk

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// Catalog is what the desk asks of the store beside Temporal: what the
// store decided on a key (every answer is checked against it), free slots
// for a conflict's alternatives, the policy in force for a reassignment,
// drift and hand-offs for the operator, and the releases and restores
// that settle a lost booking. A read starts no workflow. *catalog.Catalog,
// over the store and the mirrors, implements it.
type Catalog interface {
	Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error)
	Decision(ctx context.Context, in booking.DecisionInput) (booking.LookupOutput, error)
	Policy(ctx context.Context) (booking.Policy, error)
	OpenFlags(ctx context.Context) ([]booking.Flag, error)
	Timeline(ctx context.Context, key string) (booking.Timeline, error)
	ResolveFlag(ctx context.Context, id int64, note string) (booking.Flag, error)
	OutsideRules(ctx context.Context) ([]booking.OutsideRules, error)
	Restore(ctx context.Context, b booking.Booking) (booking.LookupOutput, error)
	ReleaseLost(ctx context.Context, b booking.Booking, note string) (booking.LookupOutput, error)
	ReleaseAgain(ctx context.Context, b booking.Booking, replacedBy string) (booking.LookupOutput, error)
	RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, bool, error)
	OpenHandoffs(ctx context.Context) ([]booking.Handoff, error)
	ReconcileFailures(ctx context.Context) ([]booking.StepFailure, error)
	ResolveHandoff(ctx context.Context, id int64, note string) (booking.Handoff, error)
}

// Options configure a Desk.
type Options struct {
	// Sagas configure the saga client under the desk; its Check and Read
	// are the desk's (checked, Status).
	Sagas sagaclient.Options
	// Alternatives is how many free slots a conflict receipt offers.
	Alternatives int
	// Silent is how long a saga may run without publishing a status
	// before Attention lists it (its workflow tasks are failing, say):
	// every saga publishes one within seconds of its first call.
	Silent time.Duration
	// OnPending, when set, is told each booking call (a commit, a hold, a
	// reschedule, a cancel) answered pending_reconciliation, as it was
	// sent: its outcome is announced once known (booking.settled), and
	// reconciliation sends it again if Temporal never got it. Reads never
	// tell it: a read writes nothing. It must not block.
	OnPending func(ctx context.Context, call booking.PendingCall)
}

// Desk answers booking calls as the store backs them. The saga client's
// calls that answer no booking (the conversation's bookkeeping, outcomes,
// webhooks) are its own, promoted; those that do are checked here.
type Desk struct {
	*sagaclient.Client
	tc      client.Client
	catalog Catalog
	opts    Options
}

// New is the desk over a connected Temporal client and the store's
// catalogue.
func New(tc client.Client, catalog Catalog, opts Options) *Desk {
	if opts.Alternatives <= 0 {
		opts.Alternatives = 3
	}
	if opts.Silent <= 0 {
		opts.Silent = 5 * time.Minute
	}
	d := &Desk{tc: tc, catalog: catalog, opts: opts}
	opts.Sagas.Check, opts.Sagas.Read = d.checked, d.Status
	d.Client = sagaclient.New(tc, opts.Sagas)
	return d
}
