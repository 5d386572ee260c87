package api

import (
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// BookingBody is POST /v1/bookings.
type BookingBody struct {
	RequestKey string `json:"request_key"`
	// ConversationID, when given, books under the conversation's pending
	// rule: the key must be the one POST /v1/intents gave it for this
	// slot, an earlier booking of it still pending holds this one back
	// (409 earlier_booking_pending), and this one, pending, holds the next.
	ConversationID string `json:"conversation_id,omitempty"`
	edge.Slot
	ExpectedPolicyVersion string        `json:"expected_policy_version"`
	Contact               *edge.Contact `json:"contact,omitempty"`
}

// Request checks the body and builds the commit.
func (b BookingBody) Request(now time.Time) (booking.CommitRequest, *edge.Error) {
	if b.RequestKey == "" {
		return booking.CommitRequest{}, edge.BadRequest(booking.CodeInvalidRequestKey,
			"request_key is required: get one from POST /v1/intents and reuse it for every retry")
	}
	if err := booking.ValidateKey(b.RequestKey); err != nil {
		return booking.CommitRequest{}, edge.FromRejection(err)
	}
	return edge.NewCommit(b.Slot, b.ExpectedPolicyVersion, b.Contact, now)
}

// IntentBody is POST /v1/intents.
type IntentBody struct {
	ConversationID string `json:"conversation_id"`
	edge.Slot
	// Hold asks the store to hold the slot for the policy's hold TTL:
	// competitors meet it as taken, and book confirms it. It needs
	// expected_policy_version, as a booking does.
	Hold                  bool   `json:"hold,omitempty"`
	ExpectedPolicyVersion string `json:"expected_policy_version,omitempty"`
	// HoldMinutes shortens the hold; the policy's hold TTL is the most.
	HoldMinutes int `json:"hold_minutes,omitempty"`
}
