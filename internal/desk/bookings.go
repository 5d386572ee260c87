package desk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Commit books req under key and returns the receipt, within the commit
// wait and a margin. A conflict, or a refusal of the time itself, carries
// fresh alternatives when they can be had within what is left of that.
func (d *Desk) Commit(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	return d.send(ctx, key, req, booking.PendingCommit)
}

// Hold places a hold on req's slot under key (sagaclient.Client.Hold).
func (d *Desk) Hold(ctx context.Context, key string, req booking.CommitRequest) (receipt.Receipt, error) {
	return d.send(ctx, key, req, booking.PendingHold)
}

// send sends req to key's saga as op (a commit or a hold) and checks the
// answer against the store, all within the commit wait and a margin. The
// contact is sealed first, so that a call noted pending holds no contact
// in plain text either.
func (d *Desk) send(ctx context.Context, key string, req booking.CommitRequest, op booking.PendingOp) (receipt.Receipt, error) {
	ctx, cancel := d.Bound(ctx)
	defer cancel()
	if err := d.Prepare(ctx, key, &req); err != nil {
		return receipt.Receipt{}, err
	}
	call := d.Client.Commit
	if op == booking.PendingHold {
		call = d.Client.Hold
	}
	// The saga's answer comes back checked against the store (checked,
	// the client's Check): a re-sent call gets the saga's first answer,
	// and the store may have lost or moved that booking since (a
	// restore, new zone rules).
	r, err := call(ctx, key, req)
	if err == nil && op == booking.PendingCommit && otherTime(r) {
		r.Alternatives = d.alternatives(ctx, req.Intent)
	}
	d.notePending(ctx, booking.PendingCall{Op: op, RequestKey: key, Request: &req}, r, err)
	return r, err
}

// notePending tells OnPending of a booking call answered
// pending_reconciliation.
func (d *Desk) notePending(ctx context.Context, call booking.PendingCall, r receipt.Receipt, err error) {
	if err == nil && r.Status == receipt.StatusPending && d.opts.OnPending != nil {
		d.opts.OnPending(ctx, call)
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

// alternatives looks for free slots of the same length around the asked
// time, nearest first; when that day has none near (a holiday, a day at
// its limit), the first ones of the week after. It is best effort: a
// conflict is still a conflict without them.
func (d *Desk) alternatives(ctx context.Context, in booking.Intent) []receipt.Slot {
	for _, w := range [][2]time.Duration{{-6 * time.Hour, 6 * time.Hour}, {6 * time.Hour, 7 * 24 * time.Hour}} {
		av, err := d.catalog.Availability(ctx, booking.AvailabilityQuery{PropertyID: in.PropertyID, AgentID: in.AgentID,
			AgentPool: in.AgentPool, ExtraResources: in.ExtraResources, From: in.StartsAt.Add(w[0]), To: in.StartsAt.Add(w[1]),
			Duration: in.EndsAt.Sub(in.StartsAt)})
		if err != nil {
			return nil
		}
		if out := nearest(av.Slots, in.StartsAt, d.opts.Alternatives); len(out) > 0 {
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
func (d *Desk) Status(ctx context.Context, key string) (receipt.Receipt, error) {
	ctx, cancel := d.Bound(ctx)
	defer cancel()
	r, err := d.status(ctx, key)
	return sagaclient.Unknown(key, r, err)
}

func (d *Desk) status(ctx context.Context, key string) (receipt.Receipt, error) {
	// Half the budget for the saga, so that the store can still be asked
	// when the saga can't answer.
	qctx, cancel := context.WithTimeout(ctx, halfLeft(ctx))
	r, err := d.Receipt(qctx, key)
	cancel()
	switch {
	case errors.Is(err, sagaclient.ErrNotFound):
		return d.fromStore(ctx, booking.DecisionInput{RequestKey: key})
	case err == nil:
		return d.checked(ctx, r), nil
	default:
		// The saga can't answer now (its workers restarting, the query
		// timing out); the store holds every decision, so a decided key is
		// answered from there, and only an undecided one is pending.
		if s, serr := d.fromStore(ctx, booking.DecisionInput{RequestKey: key}); serr == nil {
			return s, nil
		}
	}
	return r, err
}

// halfLeft is half the time left before ctx's deadline.
func halfLeft(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl) / 2
	}
	return time.Minute
}

// fromStore builds the receipt from the store's record alone.
func (d *Desk) fromStore(ctx context.Context, in booking.DecisionInput) (receipt.Receipt, error) {
	out, err := d.catalog.Decision(ctx, in)
	if err != nil {
		return receipt.Receipt{}, err
	}
	key := in.RequestKey
	if out.Refusal != nil {
		key = out.Refusal.RequestKey
	} else if out.Found {
		key = out.Booking.RequestKey
	}
	r, ok := workflows.StoreReceipt(key, out)
	switch {
	case ok:
		return d.reassigned(ctx, r), nil
	case out.PendingKey != "":
		// A call answered pending that nothing decided yet: it still may
		// be (reconciliation sends it again), so it is never "not found".
		return receipt.Pending(out.PendingKey), nil
	}
	return receipt.Receipt{}, sagaclient.ErrNotFound
}

// ByReference resolves the reference a caller quotes (BS-XXXX-XXXX) to its
// booking's current receipt: from the store, or, for a key the store has
// not decided yet, from the saga that carries the reference.
func (d *Desk) ByReference(ctx context.Context, ref string) (receipt.Receipt, error) {
	ctx, cancel := d.Bound(ctx)
	defer cancel()
	r, err := d.fromStore(ctx, booking.DecisionInput{Reference: ref})
	if !errors.Is(err, sagaclient.ErrNotFound) {
		return r, err
	}
	key, err := d.KeyByReference(ctx, ref)
	if err != nil {
		return receipt.Receipt{}, err
	}
	return d.Status(ctx, key)
}

// Cancel cancels the booking of key (sagaclient.Client.Cancel); a cancel
// answered pending is noted.
func (d *Desk) Cancel(ctx context.Context, key string) (receipt.Receipt, error) {
	r, err := d.Client.Cancel(ctx, key)
	d.notePending(ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: key}, r, err)
	return r, err
}

// Reschedule moves the booking of key to req under newKey
// (sagaclient.Client.Reschedule). A resend hears what the new booking is
// now, and a move answered pending is noted.
func (d *Desk) Reschedule(ctx context.Context, key, newKey string, req booking.CommitRequest) (receipt.Receipt, error) {
	ctx, cancel := d.Bound(ctx)
	defer cancel()
	if err := d.Prepare(ctx, newKey, &req); err != nil {
		return receipt.Receipt{}, err
	}
	r, err := d.Client.Reschedule(ctx, key, newKey, req)
	if err == nil && r.Status != receipt.StatusPending && r.RequestKey == newKey &&
		(r.Reason == nil || r.Reason.Code != string(booking.CodeRequestKeyReused)) {
		// The old booking's saga remembers the new booking's first
		// outcome; a resend must hear what the new booking is now (it may
		// have been cancelled since), which its own saga or the store says.
		if now, err := d.status(ctx, newKey); err == nil {
			r = now
		}
	}
	d.notePending(ctx, booking.PendingCall{Op: booking.PendingReschedule, RequestKey: newKey, Replaces: key, Request: &req}, r, err)
	return r, err
}

// Reassign moves the confirmed booking of key to agent at the same time,
// as a reschedule does: the new booking first, then the old released in
// the same store transaction, and its caller messaged. The new booking's
// key is derived from key and agent, so that sending the same reassignment
// again is a resend, not a second move.
func (d *Desk) Reassign(ctx context.Context, key, agent string) (receipt.Receipt, error) {
	if err := booking.ValidateKey(key); err != nil {
		return receipt.Receipt{}, err
	}
	if agent == "" {
		return receipt.Receipt{}, booking.Rejectf(booking.CodeMissingField, "the agent to reassign %s to is required", key)
	}
	newKey := ReassignKey(key, agent)
	req, err := d.reassignment(ctx, key, newKey, agent)
	if err != nil {
		return receipt.Receipt{}, err
	}
	return d.Reschedule(ctx, key, newKey, req)
}

// reassignment is the booking of key as the store holds it, under agent.
// A booking already moved to newKey (this reassignment, sent before) is
// resent as it was, so its saga or the store answers it.
func (d *Desk) reassignment(ctx context.Context, key, newKey, agent string) (booking.CommitRequest, error) {
	out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: key})
	if err != nil {
		return booking.CommitRequest{}, fmt.Errorf("reassign %s: %w", key, err)
	}
	b := out.Booking
	switch {
	case !out.Booked():
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeNotBooked, "the store holds no booking under %s to reassign", key)
	case b.Status == booking.StatusReleasedForReschedule && b.ReplacedByRequestKey == newKey:
	case b.Status != booking.StatusConfirmed:
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeWrongState, "%s is %s: only a confirmed booking is reassigned", key, b.Status)
	case b.Intent.AgentID == agent:
		return booking.CommitRequest{}, booking.Rejectf(booking.CodeInvalidReplacement, "%s is already %s's", key, agent)
	}
	p, err := d.catalog.Policy(ctx)
	if err != nil {
		return booking.CommitRequest{}, fmt.Errorf("reassign %s: %w", key, err)
	}
	in := b.Intent
	in.AgentID, in.AgentPool, in.Replaces = agent, "", ""
	return booking.CommitRequest{Intent: in, ExpectedPolicyVersion: p.Version}, nil
}

// ReassignKey is the request key of the booking that moves key to agent.
func ReassignKey(key, agent string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + agent))
	return "reassign-" + hex.EncodeToString(sum[:16])
}
