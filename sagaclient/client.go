// Package sagaclient is how an agent backend talks to bookingsaga: every
// call goes through the Temporal client, and every answer is a typed
// receipt or a typed error. The agent words its reply from Receipt.Status
// alone.
package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ContactSealer seals a caller's contact under its booking's own data
// key, so that what enters Temporal's history is ciphertext that erasing
// the key makes unreadable. The store implements it; sealing may return
// nil when the contact was erased already.
type ContactSealer interface {
	SealContact(ctx context.Context, key string, c booking.Contact) (*booking.Contact, error)
}

// Catalog answers the reads that need no saga (availability, what the
// store decided, drift, a booking's timeline) and writes the catalogue, in
// the caller's own process: a read starts no workflow, and a refused one
// is an answer rather than a failed execution. *catalog.Catalog, over the
// store and the mirrors, implements it.
type Catalog interface {
	Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error)
	Decision(ctx context.Context, in booking.DecisionInput) (booking.LookupOutput, error)
	OpenFlags(ctx context.Context) ([]booking.Flag, error)
	Timeline(ctx context.Context, key string) (booking.Timeline, error)
	ResolveFlag(ctx context.Context, id int64, note string) (booking.Flag, error)
	PutResource(ctx context.Context, r booking.Resource) error
	PutPolicy(ctx context.Context, p booking.Policy) error
	Bookings(ctx context.Context, q booking.ListQuery) ([]booking.Booking, error)
	Resource(ctx context.Context, id string) (booking.Resource, error)
	Policy(ctx context.Context) (booking.Policy, error)
	OutsideRules(ctx context.Context) ([]booking.OutsideRules, error)
	PutPool(ctx context.Context, p booking.Pool) error
	Pool(ctx context.Context, id string) (booking.Pool, error)
	Release(ctx context.Context, key string) (booking.LookupOutput, error)
	Restore(ctx context.Context, b booking.Booking) (booking.LookupOutput, error)
	ReleaseLost(ctx context.Context, b booking.Booking, note string) (booking.LookupOutput, error)
	ReleaseAgain(ctx context.Context, b booking.Booking, replacedBy string) (booking.LookupOutput, error)
	RequestHandoff(ctx context.Context, h booking.Handoff) (booking.Handoff, bool, error)
	OpenHandoffs(ctx context.Context) ([]booking.Handoff, error)
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
	// MaxInFlight bounds the booking calls (book, hold, reschedule) this
	// client has sent and not yet answered; one more is not sent at all
	// and fails at once with ErrOverloaded. The bound in force adapts
	// below it to how long admitted calls take (gate). Zero admits every
	// call.
	MaxInFlight int
	// OnInFlight, when set, is told the number of booking calls in
	// flight each time it changes (a gauge); it must not block, since it
	// is told in order, under the gate's lock.
	OnInFlight func(n int)
}

// Client books through the booking sagas.
type Client struct {
	tc   client.Client
	opts Options
	gate *gate
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
	opts.Settings = opts.Settings.WithDefaults()
	return &Client{tc: tc, opts: opts, gate: newGate(opts.MaxInFlight, opts.Settings.CommitWait, opts.OnInFlight)}
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

// Availability returns free slots under the current policy, with the
// policy version and the time of the snapshot.
func (c *Client) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	if c.opts.Catalog == nil {
		return booking.Availability{}, ErrNoCatalog
	}
	return c.opts.Catalog.Availability(ctx, q)
}

// Bookings lists bookings from the store, one page after q.After.
func (c *Client) Bookings(ctx context.Context, q booking.ListQuery) ([]booking.Booking, error) {
	if c.opts.Catalog == nil {
		return nil, ErrNoCatalog
	}
	return c.opts.Catalog.Bookings(ctx, q)
}

// Resource reads one resource, with its hours and limits.
func (c *Client) Resource(ctx context.Context, id string) (booking.Resource, error) {
	if c.opts.Catalog == nil {
		return booking.Resource{}, ErrNoCatalog
	}
	return c.opts.Catalog.Resource(ctx, id)
}

// Policy reads the policy in force.
func (c *Client) Policy(ctx context.Context) (booking.Policy, error) {
	if c.opts.Catalog == nil {
		return booking.Policy{}, ErrNoCatalog
	}
	return c.opts.Catalog.Policy(ctx)
}

// PutPool creates or replaces a team of agents.
func (c *Client) PutPool(ctx context.Context, p booking.Pool) error {
	if c.opts.Catalog == nil {
		return ErrNoCatalog
	}
	return c.opts.Catalog.PutPool(ctx, p)
}

// Pool reads a team of agents.
func (c *Client) Pool(ctx context.Context, id string) (booking.Pool, error) {
	if c.opts.Catalog == nil {
		return booking.Pool{}, ErrNoCatalog
	}
	return c.opts.Catalog.Pool(ctx, id)
}

// PutResource creates or updates a resource.
func (c *Client) PutResource(ctx context.Context, r booking.Resource) error {
	if c.opts.Catalog == nil {
		return ErrNoCatalog
	}
	return c.opts.Catalog.PutResource(ctx, r)
}

// PutPolicy makes a policy version current.
func (c *Client) PutPolicy(ctx context.Context, p booking.Policy) error {
	if c.opts.Catalog == nil {
		return ErrNoCatalog
	}
	return c.opts.Catalog.PutPolicy(ctx, p)
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

// Select returns the request key for one caller's choice: the same intent
// in the same conversation always gets the same key, so a re-issued tool
// call cannot book twice; a new choice gets a new random key.
func (c *Client) Select(ctx context.Context, conversationID string, in booking.Intent) (string, error) {
	ch, err := c.Choose(ctx, conversationID, in, false)
	return ch.RequestKey, err
}

// Choose is Select with the conversation's open bookings: the keys of
// earlier bookings whose outcome is not known to be settled. With book
// set, the key is remembered as booked until Settle.
func (c *Client) Choose(ctx context.Context, conversationID string, in booking.Intent, book bool) (workflows.ChooseResult, error) {
	if conversationID == "" {
		return workflows.ChooseResult{}, booking.Rejectf(booking.CodeMissingField, "conversation_id is required")
	}
	update := booking.UpdateChoose
	if book {
		update = booking.UpdateChooseToBook
	}
	// A choice gets a booking call's budget, no more: a hold (a choice,
	// then a commit) must fit in what a voice platform waits, even when no
	// worker takes the choice (a deploy).
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	id := workflows.ConversationWorkflowID(conversationID)
	op := c.tc.NewWithStartWorkflowOperation(conversationStart(id, c.opts.TaskQueue), booking.ConversationWorkflowName,
		workflows.ConversationInput{ConversationID: conversationID})
	h, err := c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: update, Args: []any{in},
			WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err != nil {
		return workflows.ChooseResult{}, fmt.Errorf("select %s: %w", conversationID, err)
	}
	var res workflows.ChooseResult
	if err := h.Get(ctx, &res); err != nil {
		return workflows.ChooseResult{}, fmt.Errorf("select %s: %w", conversationID, err)
	}
	return res, nil
}

// Pending returns the receipt of the first of keys still pending
// reconciliation, for the conversation to wait on; the others are
// settled, and forgotten as open. Nil means the conversation goes on. A
// key that neither Temporal nor the store knows is a booking still on its
// way (its call has not reached Temporal yet): it is pending too, and
// stays open. The caller settles a key its call answered without sending
// anything (Settle), and booking_status does for one a crash left.
func (c *Client) Pending(ctx context.Context, conversationID string, keys []string) (*receipt.Receipt, error) {
	for _, key := range keys {
		r, err := c.Status(ctx, key)
		if errors.Is(err, ErrNotFound) {
			p := pending(key)
			return &p, nil
		}
		if err != nil {
			return nil, err
		}
		if r.Status == receipt.StatusPending {
			return &r, nil
		}
		if err := c.conversationUpdate(ctx, conversationID, booking.UpdateSettle, key); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// Made reports whether conversationID made key: a voice tool may act only
// on its own conversation's bookings.
func (c *Client) Made(ctx context.Context, conversationID, key string) (bool, error) {
	keys, err := c.Keys(ctx, conversationID) // none for a conversation that never chose anything
	return slices.Contains(keys, key), err
}

// Adopt makes key, a booking of an earlier call, this conversation's own,
// starting the conversation's key book if need be: its caller proved the
// booking theirs. Only the key goes to Temporal.
func (c *Client) Adopt(ctx context.Context, conversationID, key string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	id := workflows.ConversationWorkflowID(conversationID)
	op := c.tc.NewWithStartWorkflowOperation(conversationStart(id, c.opts.TaskQueue), booking.ConversationWorkflowName,
		workflows.ConversationInput{ConversationID: conversationID})
	h, err := c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: booking.UpdateAdopt, Args: []any{workflows.RetireRequest{RequestKey: key}},
			WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("adopt %s in %s: %w", key, conversationID, err)
	}
	return nil
}

// Keys are the request keys the conversation made or adopted; none for
// a conversation that chose nothing.
func (c *Client) Keys(ctx context.Context, conversationID string) ([]string, error) {
	v, err := c.tc.QueryWorkflow(ctx, workflows.ConversationWorkflowID(conversationID), "", booking.QueryKeys)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	var keys []string
	if err == nil {
		err = v.Get(&keys)
	}
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", conversationID, err)
	}
	return keys, nil
}

// Settle tells the conversation that key's outcome is known.
func (c *Client) Settle(ctx context.Context, conversationID, key string) error {
	return c.conversationUpdate(ctx, conversationID, booking.UpdateSettle, key)
}

// Retire makes the conversation forget key: the booking under it ended
// without being kept, and the same choice should get a fresh key. A
// conversation that has closed has nothing to forget.
func (c *Client) Retire(ctx context.Context, conversationID, key string) error {
	return c.conversationUpdate(ctx, conversationID, booking.UpdateRetire, key)
}

func (c *Client) conversationUpdate(ctx context.Context, conversationID, update, key string) error {
	h, err := c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.ConversationWorkflowID(conversationID),
		UpdateName: update, Args: []any{workflows.RetireRequest{RequestKey: key}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("%s %s in %s: %w", update, key, conversationID, err)
	}
	return nil
}

// conversationStart joins a running key book, and starts a new one after
// the last closed (a day idle).
func conversationStart(id, queue string) client.StartWorkflowOptions {
	o := StartOptions(id, queue)
	o.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	o.StaticSummary = "Conversation · the request keys of one caller's choices"
	return o
}
