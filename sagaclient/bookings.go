package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// ErrNotFound means neither a saga nor the store knows the key: the
// service's one "not found", booking.ErrNotFound. Temporal's own answer
// for a workflow it has not got is translated to it here (notFound), and
// never leaves this package.
var ErrNotFound = booking.ErrNotFound

// notFound reports Temporal's answer that it has no such workflow.
func notFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// bounded gives a booking call its whole budget: the saga's commit wait
// and a margin. A voice caller can't wait longer, so past it the call
// answers pending_reconciliation rather than late.
func (c *Client) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.Settings.CommitWait+c.opts.Margin)
}

// Bound is a booking call's budget for a caller that does more than the
// call (reads the store first, say): the whole of it then answers within
// the commit wait and the margin.
func (c *Client) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return c.bounded(ctx)
}

// pending is the answer to a call whose outcome may have happened: the
// request may have reached Temporal, so it is never a failure. The saga,
// or the reconciliation schedule, settles it; the agent checks again with
// the same key or the reference.
func pending(key string) receipt.Receipt {
	return receipt.Receipt{RequestKey: key, Status: receipt.StatusPending, Reference: receipt.Reference(key)}
}

// unknown turns a technical failure after the request may have reached
// Temporal into the pending answer. Refusals, a missing booking and a
// request that never left this process stay errors: nothing can have
// happened, and the caller may retry with the same key.
func unknown(key string, r receipt.Receipt, err error) (receipt.Receipt, error) {
	err = refusal(err)
	var rej *booking.Rejection
	if err == nil || errors.As(err, &rej) || errors.Is(err, ErrNotFound) || neverSent(err) {
		return r, err
	}
	return pending(key), nil
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

// seal replaces req's contact with its sealed form under key's data key.
// A failure happens before anything is sent, so the call can be retried.
func (c *Client) seal(ctx context.Context, key string, req *booking.CommitRequest) error {
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

// Commit books req under key and returns the receipt, within the commit
// wait and a margin. A conflict, or a refusal of the time itself, carries
// fresh alternatives when they can be had within what is left of that.
func (c *Client) Commit(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	return c.send(ctx, key, req, booking.PendingCommit)
}

// send validates key, seals req's contact and sends req to key's saga as
// op (a commit or a hold), all within the commit wait and a margin; a
// commit's answer another time could change carries alternatives.
func (c *Client) send(ctx context.Context, key string, req booking.CommitRequest, op booking.PendingOp) (receipt.Receipt, error) {
	if err := booking.ValidateKey(key); err != nil {
		return receipt.Receipt{}, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	if err := c.seal(ctx, key, &req); err != nil {
		return receipt.Receipt{}, err
	}
	start := Commit
	if op == booking.PendingHold {
		start = Select
	}
	r, err := start(ctx, c.tc, c.opts.TaskQueue, workflows.BookingInput{RequestKey: key, Settings: c.opts.Settings}, req)
	if err == nil {
		// A re-sent call gets the saga's first answer: the store may have
		// lost or moved that booking since (a restore, new zone rules).
		r, err = c.checked(ctx, r)
	}
	if err == nil && op == booking.PendingCommit && otherTime(r) {
		r.Alternatives = c.alternatives(ctx, req.Intent)
	}
	r, err = unknown(key, r, err)
	c.notePending(ctx, booking.PendingCall{Op: op, RequestKey: key, Request: &req}, r, err)
	return r, err
}

// notePending tells OnPending of a booking call answered
// pending_reconciliation.
func (c *Client) notePending(ctx context.Context, call booking.PendingCall, r receipt.Receipt, err error) {
	if err == nil && r.Status == receipt.StatusPending && c.opts.OnPending != nil {
		c.opts.OnPending(ctx, call)
	}
}

// otherTime reports an answer that another time could change: a conflict,
// or a refusal for the time itself (closed then, off, the day full, too
// soon). Those receipts carry alternatives.
func otherTime(r receipt.Receipt) bool {
	if r.Status == receipt.StatusConflict {
		return true
	}
	if r.Status != receipt.StatusRejected || r.Reason == nil {
		return false
	}
	switch booking.Code(r.Reason.Code) {
	case booking.CodeOutsideHours, booking.CodeOutsideBookableHours, booking.CodeTimeOff, booking.CodeLimitReached, booking.CodeTooShortNotice:
		return true
	}
	return false
}

// Hold places a hold on req's slot under key, within the commit wait and a
// margin: the store holds it for the policy's hold TTL, and Commit with the
// same key and intent confirms it. The receipt says "held", never
// "confirmed".
func (c *Client) Hold(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	req.Hold = true
	return c.send(ctx, key, req, booking.PendingHold)
}

// alternatives looks for free slots of the same length around the asked
// time, nearest first; when that day has none near (a holiday, a day at
// its limit), the first ones of the week after. It is best effort: a
// conflict is still a conflict without them.
func (c *Client) alternatives(ctx context.Context, in booking.Intent) []receipt.Slot {
	for _, w := range [][2]time.Duration{{-6 * time.Hour, 6 * time.Hour}, {6 * time.Hour, 7 * 24 * time.Hour}} {
		av, err := c.availability(ctx, booking.AvailabilityQuery{PropertyID: in.PropertyID, AgentID: in.AgentID,
			AgentPool: in.AgentPool, ExtraResources: in.ExtraResources, From: in.StartsAt.Add(w[0]), To: in.StartsAt.Add(w[1]),
			Duration: in.EndsAt.Sub(in.StartsAt)})
		if err != nil {
			return nil
		}
		if out := nearest(av.Slots, in.StartsAt, c.opts.Alternatives); len(out) > 0 {
			return out
		}
	}
	return nil
}

// nearest picks up to n slots nearest to at.
func nearest(slots []booking.Slot, at time.Time, n int) []receipt.Slot {
	dist := func(s booking.Slot) time.Duration { return s.StartsAt.Sub(at).Abs() }
	var out []receipt.Slot
	for len(out) < n && len(slots) > 0 {
		best := 0
		for i := range slots {
			if dist(slots[i]) < dist(slots[best]) {
				best = i
			}
		}
		s := slots[best]
		out = append(out, receipt.Slot{StartsAt: s.StartsAt, EndsAt: s.EndsAt, LocalStart: s.LocalStart})
		slots = append(slots[:best:best], slots[best+1:]...)
	}
	return out
}

// Status is the current receipt of key: the saga's while it is kept, the
// store's once Temporal has forgotten it. ErrNotFound means neither knows
// the key.
func (c *Client) Status(ctx context.Context, key string) (receipt.Receipt, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	r, err := c.status(ctx, key)
	return unknown(key, r, err)
}

func (c *Client) status(ctx context.Context, key string) (receipt.Receipt, error) {
	// Half the budget for the saga, so that the store can still be asked
	// when the saga can't answer.
	qctx, cancel := context.WithTimeout(ctx, halfLeft(ctx))
	r, err := Receipt(qctx, c.tc, key, nil)
	cancel()
	switch {
	case notFound(err):
		return c.fromStore(ctx, booking.DecisionInput{RequestKey: key})
	case err == nil:
		return c.checked(ctx, r)
	default:
		// The saga can't answer now (its workers restarting, the query
		// timing out); the store holds every decision, so a decided key is
		// answered from there, and only an undecided one is pending.
		if s, serr := c.fromStore(ctx, booking.DecisionInput{RequestKey: key}); serr == nil {
			return s, nil
		}
	}
	return r, err
}

// halfLeft is half the time left before ctx's deadline.
func halfLeft(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d) / 2
	}
	return time.Minute
}

func (c *Client) availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	if c.opts.Catalog == nil {
		return booking.Availability{}, ErrNoCatalog
	}
	return c.opts.Catalog.Availability(ctx, q)
}

func (c *Client) decision(ctx context.Context, in booking.DecisionInput) (booking.LookupOutput, error) {
	if c.opts.Catalog == nil {
		return booking.LookupOutput{}, ErrNoCatalog
	}
	return c.opts.Catalog.Decision(ctx, in)
}

// fromStore builds the receipt from the store's record alone.
func (c *Client) fromStore(ctx context.Context, in booking.DecisionInput) (receipt.Receipt, error) {
	d, err := c.decision(ctx, in)
	if err != nil {
		return receipt.Receipt{}, err
	}
	key := in.RequestKey
	if d.Refusal != nil {
		key = d.Refusal.RequestKey
	} else if d.Found {
		key = d.Booking.RequestKey
	}
	r, ok := workflows.StoreReceipt(key, d)
	switch {
	case ok:
		return c.reassigned(ctx, r), nil
	case d.PendingKey != "":
		// A call answered pending that nothing decided yet: it still may
		// be (reconciliation sends it again), so it is never "not found".
		return pending(d.PendingKey), nil
	}
	return receipt.Receipt{}, ErrNotFound
}

// ByReference resolves the reference a caller quotes (BS-XXXX-XXXX) to its
// booking's current receipt: from the store, or, for a key the store has
// not decided yet, from the saga that carries the reference.
func (c *Client) ByReference(ctx context.Context, ref string) (receipt.Receipt, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	r, err := c.fromStore(ctx, booking.DecisionInput{Reference: ref})
	if !errors.Is(err, ErrNotFound) {
		return r, refusal(err)
	}
	key, err := KeyByReference(ctx, c.tc, ref)
	if err != nil {
		return receipt.Receipt{}, err
	}
	return c.Status(ctx, key)
}

// Cancel cancels the booking of key; cancelling twice is fine.
func (c *Client) Cancel(ctx context.Context, key string) (receipt.Receipt, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	r, err := Update(ctx, c.tc, key, booking.UpdateCancel, workflows.CancelRequest{})
	if notFound(err) {
		r, err = c.cancelInStore(ctx, key)
	}
	r, err = unknown(key, r, err)
	c.notePending(ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: key}, r, err)
	return r, err
}

// cancelInStore cancels a booking whose saga Temporal does not have (it
// closed after the viewing, or Temporal lost it): a worker releases it in
// the store (workflows.ReleaseGone), if it is still live and its viewing
// still to come, and the store's answer is the one given. A key the store
// never decided whose booking call is still pending (Temporal never got
// it) is withdrawn instead (workflows.Withdraw): the cancel becomes the
// key's decision, so the call's resend books nothing. Without the store,
// the status is.
func (c *Client) cancelInStore(ctx context.Context, key string) (receipt.Receipt, error) {
	if c.opts.Catalog == nil {
		return c.status(ctx, key)
	}
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
	return c.status(ctx, key)
}

// onWorker runs the store step workflow on key and returns its answer.
func (c *Client) onWorker(ctx context.Context, prefix, workflow, key string) (booking.LookupOutput, error) {
	run, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: prefix + key, TaskQueue: c.opts.TaskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, workflow, key)
	if err != nil {
		return booking.LookupOutput{}, err
	}
	var out booking.LookupOutput
	err = run.Get(ctx, &out)
	return out, err
}

// Reschedule moves the booking of key to req under newKey: the new slot is
// booked first, and the old one released in the same store transaction.
// The receipt is the new booking's, with Replaces set.
func (c *Client) Reschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error) {
	if err := booking.ValidateKey(newKey); err != nil {
		return receipt.Receipt{}, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	if err := c.seal(ctx, newKey, &req); err != nil {
		return receipt.Receipt{}, err
	}
	r, err := Update(ctx, c.tc, key, booking.UpdateReschedule, workflows.RescheduleRequest{NewRequestKey: newKey, Commit: req})
	switch {
	case notFound(err):
		r, err = c.closedReschedule(ctx, key, newKey, req)
	case err == nil && r.Status != receipt.StatusPending && r.RequestKey == newKey &&
		(r.Reason == nil || r.Reason.Code != string(booking.CodeRequestKeyReused)):
		// The old booking's saga remembers the new booking's first
		// outcome; a resend must hear what the new booking is now (it may
		// have been cancelled since), which its own saga or the store says.
		if now, err := c.status(ctx, newKey); err == nil {
			r = now
		}
	}
	r, err = unknown(newKey, r, err)
	c.notePending(ctx, booking.PendingCall{Op: booking.PendingReschedule, RequestKey: newKey, Replaces: key, Request: &req}, r, err)
	return r, err
}

// closedReschedule moves a booking whose saga has closed: the new
// booking's saga is started directly, naming the one it replaces, and the
// store decides (a closed booking is cancelled, moved or over, so it
// refuses) and records the decision under the new key.
func (c *Client) closedReschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error) {
	start := req
	start.Intent.Replaces = key
	return Commit(ctx, c.tc, c.opts.TaskQueue,
		workflows.BookingInput{RequestKey: newKey, Commit: &start, Settings: c.opts.Settings}, req)
}
