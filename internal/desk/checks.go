package desk

import (
	"context"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Every answer the client gives from a saga is checked against the
// store's decision on its key here: the store decides, and no answer
// contradicts it.

// checked is a saga's answer as the store backs it: the one path every
// answer the desk gives from a saga takes, a booking call's as a status
// read's. A pending one may have been decided by the store meanwhile; a
// confirmed or held one must still be in the store; a released one must
// not be live there again; an offered or lapsed one must not be booked
// there.
func (d *Desk) checked(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	switch r.Status {
	case receipt.StatusPending:
		return d.settled(ctx, r)
	case receipt.StatusConfirmed, receipt.StatusHeld:
		return d.stillStored(ctx, r)
	case receipt.StatusCancelled, receipt.StatusRescheduled:
		return d.reassigned(ctx, d.stillReleased(ctx, r))
	case receipt.StatusOffered, receipt.StatusExpired:
		return d.unseen(ctx, r)
	}
	return r
}

// unseen checks an offered or lapsed answer against the store: Temporal
// keeps an update it has admitted but no worker has accepted in memory
// only, so a server that dies then can lose a commit whose local activity
// already booked the key, and leave its saga offered. The store's record
// is then the answer, and an open saga is nudged to read it.
func (d *Desk) unseen(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: r.RequestKey})
	switch {
	case err != nil:
		return r
	case !out.Found && out.PendingKey != "":
		// The caller was told pending: reconciliation sends the call again.
		return receipt.Pending(out.PendingKey)
	case !out.Found:
		return r
	}
	decided, _ := workflows.StoreReceipt(r.RequestKey, out)
	if decided.Status == r.Status {
		return r // a lapse the store recorded: the saga words it as well
	}
	if r.Status == receipt.StatusOffered {
		_ = d.tc.SignalWorkflow(ctx, agency.Scoped(ctx, r.RequestKey), "", booking.SignalReconcile, out) // a nudge: the saga reads the store
	}
	return d.reassigned(ctx, decided)
}

// reassigned words a moved booking whose moves changed only its agent (a
// reassignment by staff) as what it is for the caller: the viewing stands
// at the same time and place with the agent the store now has it with
// (StatusReassigned), not "moved; nothing booked then". A move to another
// time or place, or one whose new booking is no longer confirmed, stays
// rescheduled.
func (d *Desk) reassigned(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	if r.Status != receipt.StatusRescheduled || r.StartsAt == nil || r.EndsAt == nil {
		return r
	}
	was := booking.Intent{PropertyID: r.PropertyRef, StartsAt: *r.StartsAt, EndsAt: *r.EndsAt}
	next := r.ReplacedBy
	for hops := 0; next != "" && hops < 10; hops++ {
		out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: next})
		if err != nil || !out.Booked() {
			return r
		}
		b := out.Booking
		if !b.Intent.SameTimeAndPlace(was) {
			return r // a move in time or place
		}
		switch b.Status {
		case booking.StatusConfirmed:
			r.Status, r.AgentRef, r.ReplacedBy = receipt.StatusReassigned, b.Intent.AgentID, b.RequestKey
			return r
		case booking.StatusReleasedForReschedule:
			next = b.ReplacedByRequestKey // reassigned again
		default:
			return r
		}
	}
	return r
}

// stillStored checks a live answer of a saga against the store: a
// booking the store no longer has at all (restored from an older backup)
// is never spoken as confirmed; it is pending, with its reference, until
// an operator restores or releases it (reconciliation flags it). One the
// store moved since (to keep its promised local time under new zone
// rules) is answered at the store's instants, and one it released or
// refused since (a failover behind it) with its status. A store that
// cannot answer leaves the saga's answer, which the store gave.
func (d *Desk) stillStored(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: r.RequestKey})
	switch {
	case err != nil || out.Booked() && sameLive(out.Booking, r):
		return r
	case out.Found: // refused since (a restore that found the slot taken),
		// released since (a failover behind the store), or moved since to
		// keep its promised local time under new zone rules (the saga knew
		// the old instant): the store's answer
		decided, _ := workflows.StoreReceipt(r.RequestKey, out)
		return decided
	}
	return receipt.Pending(r.RequestKey)
}

// sameLive reports whether the store's booking is what a live answer
// says: in the same status, at the same instant.
func sameLive(b booking.Booking, r receipt.Receipt) bool {
	status := b.Status == booking.StatusConfirmed && r.Status == receipt.StatusConfirmed ||
		b.Status == booking.StatusHeld && r.Status == receipt.StatusHeld
	return status && r.StartsAt != nil && b.Intent.StartsAt.Equal(*r.StartsAt)
}

// stillReleased checks a saga's "cancelled" or "rescheduled" against the
// store: one restored from a backup taken before the change holds the
// booking live again. Neither answer is then true (the caller let the
// booking go; the store has it), so it is pending with its reference until
// an operator settles it. A store that cannot answer leaves the saga's.
func (d *Desk) stillReleased(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: r.RequestKey})
	if err != nil || !out.Booked() || (out.Booking.Status != booking.StatusConfirmed && out.Booking.Status != booking.StatusHeld) {
		return r
	}
	return receipt.Pending(r.RequestKey)
}

// settled asks the store about a key its saga still calls pending: the
// store may have decided while the saga waits to look it up again. Its
// answer is the one given, and the saga is told at once, as a
// reconciliation run would tell it.
func (d *Desk) settled(ctx context.Context, r receipt.Receipt) receipt.Receipt {
	out, err := d.catalog.Decision(ctx, booking.DecisionInput{RequestKey: r.RequestKey})
	if err != nil || !out.Found || out.Refusal == nil && out.Booking.Status == booking.StatusHeld {
		return r // pending it is
	}
	_ = d.tc.SignalWorkflow(ctx, agency.Scoped(ctx, r.RequestKey), "", booking.SignalReconcile, out)
	decided, _ := workflows.StoreReceipt(r.RequestKey, out)
	return decided
}
