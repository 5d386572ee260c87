// Package sagaclient is how an agent backend talks to bookingsaga's
// booking sagas through Temporal: booking calls by Update-with-Start, the
// saga's own receipt, cancels and moves, with Temporal's errors translated
// at one boundary (a key Temporal has no saga for is ErrNotFound, a call
// that may have reached it and got no answer is pending_reconciliation);
// and a conversation's bookkeeping: one key per choice, and the pending
// rule every entry point keeps (conversation.go). Every answer is a typed
// receipt or a typed error, and the agent words its reply from
// Receipt.Status alone. It needs nothing but a Temporal client.
//
// The service's own processes answer through a door that also checks
// every answer against the store (internal/desk); an agent backend of
// its own hears the saga, which adopts the store's answers itself.
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
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ContactSealer seals a caller's contact under its booking's own data
// key, so that what enters Temporal's history is ciphertext that erasing
// the key makes unreadable. The store implements it; sealing may return
// nil when the contact was erased already.
type ContactSealer interface {
	SealContact(ctx context.Context, key string, c booking.Contact, zone string) (*booking.Contact, error)
}

// Options configure a Client.
type Options struct {
	// Contacts seals contacts before they are sent; a request with a
	// contact is refused without it, so no contact enters Temporal in
	// plain text.
	Contacts ContactSealer
	// TaskQueue is the workers' queue; empty means booking.TaskQueue.
	TaskQueue string
	// Settings are passed to every new booking saga.
	Settings workflows.Settings
	// Margin is how much longer than the saga's commit wait a booking
	// call may take in all: past it the answer is pending_reconciliation,
	// whatever Temporal is doing.
	Margin time.Duration
	// Check, when set, is given each answer a saga gives a booking call
	// (a commit, a hold), and the call returns what it makes of it; an
	// answer Temporal did not give (a call that failed, answered
	// pending) is not checked. The service's door checks it against the
	// store.
	Check func(ctx context.Context, r receipt.Receipt) receipt.Receipt
	// Read is how the conversation's pending rule reads a key's answer;
	// nil is Status, the saga's own. The service's door gives its read
	// checked against the store.
	Read func(ctx context.Context, key string) (receipt.Receipt, error)
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
	if opts.Margin <= 0 {
		opts.Margin = 400 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Client{tc: tc, opts: opts}
	if c.opts.Read == nil {
		c.opts.Read = c.Status
	}
	return c
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
