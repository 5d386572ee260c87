package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ErrNotFound means nothing knows the key: the service's one "not found",
// booking.ErrNotFound. Temporal's own answer for a workflow it has not
// got is translated to it here (notFound), and never leaves this package.
var ErrNotFound = booking.ErrNotFound

// notFound reports Temporal's answer that it has no such workflow.
func notFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// Bound gives a booking call its whole budget: the saga's commit wait and
// a margin. A voice caller can't wait longer, so past it the call answers
// pending_reconciliation rather than late. A caller that does more than
// the call (reads the store first, say) bounds the whole of it with it.
func (c *Client) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.Settings.CommitWait+c.opts.Margin)
}

// Unknown turns a technical failure after the request may have reached
// Temporal into the pending answer. Refusals, a missing booking and a
// request that never left this process stay errors: nothing can have
// happened, and the caller may retry with the same key.
func Unknown(key string, r receipt.Receipt, err error) (receipt.Receipt, error) {
	err = refusal(err)
	var rej *booking.Rejection
	if err == nil || errors.As(err, &rej) || errors.Is(err, ErrNotFound) || neverSent(err) {
		return r, err
	}
	return receipt.Pending(key), nil
}

// neverSent reports a failure to reach Temporal at all: gRPC says "while
// dialing" only for a call it never put on the wire, and the SDK "failed
// reaching server" when its first contact with the server failed.
func neverSent(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Error while dialing") || strings.Contains(msg, "failed reaching server")
}

// ErrNoSealer means a request carried a contact and the client has no
// ContactSealer to seal it with.
var ErrNoSealer = errors.New("a contact needs the store's contact keys to be sealed (give the API a database URL)")

// Prepare checks a booking call's key and replaces req's contact with
// its sealed form under the key's data key (a sealed one is left as it
// is). A failure happens before anything is sent, so the call can be
// retried; a caller that notes the call (the service's door) prepares it
// first, so that nothing it keeps holds a contact in plain text either.
func (c *Client) Prepare(ctx context.Context, key string, req *booking.CommitRequest) error {
	if err := booking.ValidateKey(key); err != nil {
		return err
	}
	if !req.Contact.HasPlain() {
		return nil
	}
	if c.opts.Contacts == nil {
		return fmt.Errorf("seal contact %s: %w", key, ErrNoSealer)
	}
	sealed, err := c.opts.Contacts.SealContact(ctx, key, *req.Contact, req.Intent.TimeZone)
	if err != nil {
		return err // the sealer names the operation and the key
	}
	req.Contact = sealed
	return nil
}

// Commit books req under key and returns the saga's receipt, within the
// commit wait and a margin.
func (c *Client) Commit(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	return c.send(ctx, key, req, booking.UpdateCommit)
}

// Hold places a hold on req's slot under key, within the commit wait and a
// margin: the store holds it for the policy's hold TTL, and Commit with the
// same key and intent confirms it. The receipt says "held", never
// "confirmed".
func (c *Client) Hold(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	req.Hold = true
	return c.send(ctx, key, req, booking.UpdateSelect)
}

// send prepares req under key and sends req to key's saga as
// update, all within the commit wait and a margin.
func (c *Client) send(ctx context.Context, key string, req booking.CommitRequest, update string) (receipt.Receipt, error) {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	if err := c.Prepare(ctx, key, &req); err != nil {
		return receipt.Receipt{}, err
	}
	in := workflows.BookingInput{RequestKey: key, Settings: c.opts.Settings}
	r, err := updateWithStart(ctx, c.tc, c.opts.TaskQueue, in, update, req)
	if err == nil && c.opts.Check != nil {
		r = c.opts.Check(ctx, r)
	}
	return Unknown(key, r, err)
}

// Receipt is the saga's own receipt of key, open or closed; ErrNotFound
// when Temporal has no saga for it (it never got the call, or retention
// removed it), which only the store can tell apart.
func (c *Client) Receipt(ctx context.Context, key string) (receipt.Receipt, error) {
	r, err := queryReceipt(ctx, c.tc, key, nil)
	if notFound(err) {
		return receipt.Receipt{}, fmt.Errorf("receipt %s: %w", key, ErrNotFound)
	}
	return r, err
}

// Status is the current receipt of key, within a booking call's budget. A
// key Temporal has no saga for is pending, never absent: only the store
// can say a key was never booked.
func (c *Client) Status(ctx context.Context, key string) (receipt.Receipt, error) {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	r, err := c.Receipt(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return receipt.Pending(key), nil
	}
	return Unknown(key, r, err)
}

// ByReference is the current receipt of the saga that carries the
// reference a caller quotes (BS-XXXX-XXXX).
func (c *Client) ByReference(ctx context.Context, ref string) (receipt.Receipt, error) {
	key, err := c.KeyByReference(ctx, ref)
	if err != nil {
		return receipt.Receipt{}, err
	}
	return c.Status(ctx, key)
}

// Cancel cancels the booking of key; cancelling twice is fine. A booking
// whose saga Temporal no longer has (it closed after the viewing, or
// Temporal lost it) is released in the store by a worker
// (workflows.ReleaseGone), if it is still live and its viewing still to
// come; a key the store never decided whose booking call is still pending
// (Temporal never got it) is withdrawn instead (workflows.Withdraw): the
// cancel becomes the key's decision, so the call's resend books nothing.
// A key neither has is ErrNotFound.
func (c *Client) Cancel(ctx context.Context, key string) (receipt.Receipt, error) {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	r, err := update(ctx, c.tc, key, booking.UpdateCancel, workflows.CancelRequest{})
	if notFound(err) {
		r, err = c.cancelGone(ctx, key)
	}
	return Unknown(key, r, err)
}

func (c *Client) cancelGone(ctx context.Context, key string) (receipt.Receipt, error) {
	out, err := c.onWorker(ctx, booking.ReleaseGoneIDPrefix, booking.ReleaseGoneWorkflowName, key)
	if err == nil && !out.Found {
		out, err = c.onWorker(ctx, booking.WithdrawIDPrefix, booking.WithdrawWorkflowName, key)
	}
	if err != nil {
		return receipt.Receipt{}, fmt.Errorf("cancel %s in the store: %w", key, err)
	}
	if r, ok := workflows.StoreReceipt(key, out); ok {
		return r, nil
	}
	return receipt.Receipt{}, fmt.Errorf("cancel %s: %w", key, ErrNotFound)
}

// onWorker runs the store step workflow on key and returns its answer.
func (c *Client) onWorker(ctx context.Context, prefix, workflow, key string) (booking.LookupOutput, error) {
	run, err := c.tc.ExecuteWorkflow(ctx, joined(ctx, prefix+key, c.opts.TaskQueue), workflow, key)
	if err != nil {
		return booking.LookupOutput{}, err
	}
	var out booking.LookupOutput
	err = run.Get(ctx, &out)
	return out, err
}

// Reschedule moves the booking of key to req under newKey: the new slot is
// booked first, and the old one released in the same store transaction.
// The receipt is the new booking's, with Replaces set. A booking whose
// saga has closed is moved by starting the new booking's saga naming it:
// the store decides (a closed booking is cancelled, moved or over, so it
// refuses) and records the decision under the new key.
func (c *Client) Reschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error) {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	if err := c.Prepare(ctx, newKey, &req); err != nil {
		return receipt.Receipt{}, err
	}
	r, err := update(ctx, c.tc, key, booking.UpdateReschedule, workflows.RescheduleRequest{NewRequestKey: newKey, Commit: req})
	if notFound(err) {
		start := req
		start.Intent.Replaces = key
		r, err = updateWithStart(ctx, c.tc, c.opts.TaskQueue,
			workflows.BookingInput{RequestKey: newKey, Commit: &start, Settings: c.opts.Settings}, booking.UpdateCommit, req)
	}
	return Unknown(newKey, r, err)
}
