package workflows

import (
	"errors"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// receiptStatus is what the agent is told for a saga state.
func (st State) receiptStatus() receipt.Status {
	switch st {
	case StateCommitting, StateUnknown:
		return receipt.StatusPending
	case StateConfirmed:
		return receipt.StatusConfirmed
	case StateConflict:
		return receipt.StatusConflict
	case StateRejected:
		return receipt.StatusRejected
	case StateCancelled:
		return receipt.StatusCancelled
	case StateExpired:
		return receipt.StatusExpired
	case StateRescheduled:
		return receipt.StatusRescheduled
	}
	return receipt.StatusOffered
}

// receipt renders the saga's state for the agent.
func (s *saga) receipt() receipt.Receipt {
	r := receipt.Receipt{RequestKey: s.st.RequestKey, Status: s.st.State.receiptStatus(), Reason: s.st.Reason,
		ReplacedBy: s.st.ReplacedBy}
	if s.st.State == StateSelected && s.st.Held {
		r.Status = receipt.StatusHeld
	}
	if r.Status == receipt.StatusPending {
		r.Reference = receipt.Reference(s.st.RequestKey)
	}
	if in := s.intent(); in != nil {
		start, end := in.StartsAt, in.EndsAt
		r.PropertyRef, r.AgentRef, r.StartsAt, r.EndsAt, r.TimeZone = in.PropertyID, in.AgentID, &start, &end, in.TimeZone
		r.Replaces = in.Replaces
		if loc, err := localtime.LoadZone(in.TimeZone); err == nil {
			r.LocalStart = localtime.Render(start, loc)
		}
	}
	if s.st.Request != nil {
		r.PolicyVersion = s.st.Request.ExpectedPolicyVersion
	}
	if b := s.st.Booking; b != nil {
		r.BookingID, r.ProviderEventID, r.PolicyVersion = b.BookingID.String(), b.ProviderEventID, b.PolicyVersion
		r.CommittedAt, r.HoldExpiresAt = b.CommittedAt, b.HoldExpiresAt
		if !b.Status.Live() {
			r.HoldExpiresAt = nil
		}
	}
	return r
}

func conflictReason(busy []booking.Busy) *receipt.Reason {
	// The calendar's free/busy cannot tell our own mirrored bookings from
	// events typed in by hand, so the message does not name the source.
	r := &receipt.Reason{Code: string(booking.CodeSlotTaken), Message: "the slot is no longer free"}
	for _, b := range busy {
		r.Busy = append(r.Busy, receipt.Busy{ResourceID: b.ResourceID, From: b.From, To: b.To})
	}
	return r
}

func rejectionReason(err error) *receipt.Reason {
	var rej *booking.Rejection
	if errors.As(err, &rej) {
		return &receipt.Reason{Code: string(rej.Code), Message: rej.Message}
	}
	return &receipt.Reason{Code: string(booking.CodeInvalidRequest), Message: err.Error()}
}
