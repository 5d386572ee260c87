// Package sagaclient is how an agent backend talks to bookingsaga: every
// booking call goes through the Temporal client, whose errors it
// translates at one boundary (a key nobody knows is ErrNotFound), and is
// checked against the store's decisions (the Catalog it is given); every
// answer is a typed receipt or a typed error. The agent words its reply
// from Receipt.Status alone. It also keeps a conversation's bookkeeping:
// one key per choice, and the pending rule every entry point keeps
// (conversation.go).
package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ContactSealer seals a caller's contact under its booking's own data
// key, so that what enters Temporal's history is ciphertext that erasing
// the key makes unreadable. The store implements it; sealing may return
// nil when the contact was erased already.
type ContactSealer interface {
	SealContact(ctx context.Context, key string, c booking.Contact, zone string) (*booking.Contact, error)
}

// Catalog is what the client asks of the store beside Temporal: what the
// store decided on a key (every answer is checked against it), free slots
// for a conflict's alternatives, the policy in force for a reassignment,
// drift and hand-offs for the operator, and the releases and restores
// that settle a lost booking. A read starts no
// workflow. *catalog.Catalog, over the store and the mirrors, implements
// it; the catalogue's own reads and writes are the API's (api.Catalogue).
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

// ErrNoCatalog is returned by a call that needs Options.Catalog when none
// was given.
var ErrNoCatalog = errors.New("no catalog: this call reads the store (give Options.Catalog)")

// Options configure a Client.
type Options struct {
	// Catalog serves availability, store decisions and the ops reads;
	// without it those calls return ErrNoCatalog.
	Catalog Catalog
	// Contacts seals contacts before they are sent; a request with a
	// contact is refused without it, so no contact enters Temporal in
	// plain text.
	Contacts ContactSealer
	// TaskQueue is the workers' queue; empty means booking.TaskQueue.
	TaskQueue string
	// Settings are passed to every new booking saga.
	Settings workflows.Settings
	// Alternatives is how many free slots a conflict receipt offers.
	Alternatives int
	// Silent is how long a saga may run without publishing a status
	// before Attention lists it (its workflow tasks are failing, say):
	// every saga publishes one within seconds of its first call.
	Silent time.Duration
	// Margin is how much longer than the saga's commit wait a booking
	// call may take in all: past it the answer is pending_reconciliation,
	// whatever Temporal or the store are doing.
	Margin time.Duration
	// OnPending, when set, is told each booking call (a commit, a hold, a
	// reschedule, a cancel) answered pending_reconciliation, as it was
	// sent: its outcome is announced once known (booking.settled), and
	// reconciliation sends it again if Temporal never got it. Reads never
	// tell it: a read writes nothing. It must not block.
	OnPending func(ctx context.Context, call booking.PendingCall)
	// Log receives what the client does not answer: a conversation's
	// bookkeeping that failed, say. Nil discards it.
	Log *zap.Logger
}

// Client books through the booking sagas.
type Client struct {
	tc   client.Client
	opts Options
}

// New wraps a connected Temporal client.
func New(tc client.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = booking.TaskQueue
	}
	if opts.Alternatives <= 0 {
		opts.Alternatives = 3
	}
	if opts.Silent <= 0 {
		opts.Silent = 5 * time.Minute
	}
	if opts.Margin <= 0 {
		opts.Margin = 400 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	opts.Settings = opts.Settings.WithDefaults()
	return &Client{tc: tc, opts: opts}
}

// Refusal is a request the store turned down (an unknown resource, a bad
// policy, ...): the request has to change, retrying cannot help.
type Refusal = booking.Rejection

// Healthy reports whether the Temporal frontend answers.
func (c *Client) Healthy(ctx context.Context) error {
	if _, err := c.tc.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	return nil
}

// refusal unwraps a store refusal from a workflow error, so callers can
// match it with errors.As(err, **Refusal).
func refusal(err error) error {
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == booking.ErrTypeRejected {
		var r booking.Rejection
		if appErr.Details(&r) == nil && r.Code != "" {
			return &r
		}
	}
	return err
}
