package voice

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/phone"
)

// Facts and people: what the voice tools may say about a property comes
// only from facts an admin approved on it (PUT /v1/resources/{id}), with
// their source; everything else, and every question of suitability,
// eligibility or advice, goes to a person, who calls the caller back.

// toolPropertyInfo answers a question on a topic from the property's
// approved facts, or says there is none.
func (t *Tools) toolPropertyInfo(ctx context.Context, _ string, a toolArgs) (Answer, error) {
	if a.PropertyID == "" || strings.TrimSpace(a.Topic) == "" {
		return Answer{}, edge.BadRequest(booking.CodeMissingField, "give property_id and the topic of the caller's question")
	}
	res, err := t.set.Catalogue.Resource(ctx, a.PropertyID)
	if err != nil {
		return Answer{}, err
	}
	if res.Kind != "property" {
		return Answer{}, edge.BadRequest(booking.CodeWrongResourceKind, "%s is a %s, not a property", a.PropertyID, res.Kind)
	}
	speaker := t.set.Names.Speaker(ctx, a.lang, a.PropertyID)
	f, ok := res.FactOn(a.Topic)
	if !ok {
		topics := make([]string, 0, len(res.Facts))
		for _, f := range res.Facts {
			topics = append(topics, booking.FactTopic(f.Topic))
		}
		line := speaker.NoFact(a.PropertyID) + " For the tools: request_human passes the question on"
		if len(topics) > 0 {
			line += "; approved topics: " + strings.Join(topics, ", ")
		}
		return Answer{Status: "no_fact", Line: line + "."}, nil
	}
	return Answer{Status: "fact", Line: f.Answer + " For the tools: source " + f.Source + ", approved " +
		f.ApprovedAt.UTC().Format("2006-01-02") + "."}, nil
}

// toolRequestHuman records that the caller wants a person, with the
// call's bookings and the number to call them back on (one they give,
// else caller ID), and tells the model to transfer where it can.
func (t *Tools) toolRequestHuman(ctx context.Context, conv string, a toolArgs) (Answer, error) {
	h := booking.Handoff{ConversationID: conv, Topic: strings.ToLower(strings.TrimSpace(a.Topic)), Reason: strings.TrimSpace(a.Reason),
		Callback: callback(a)}
	if err := h.Validate(); err != nil {
		return Answer{}, edge.FromRejection(err)
	}
	if ok, err := t.spendHandoff(ctx, conv); err != nil || !ok {
		return tooManyHandoffs, err
	}
	var err error
	if h.RequestKeys, err = t.saga.Keys(ctx, conv); err != nil {
		return Answer{}, err
	}
	if h, err = t.saga.RequestHandoff(ctx, h); err != nil {
		return Answer{}, err
	}
	line := t.set.Names.Speaker(ctx, a.lang).Handoff() + " For the tools: if your platform can transfer this call to a person, transfer it now."
	if !h.HasCallback {
		line += " No number to call back is recorded: ask the caller for one, then call request_human again with callback_number."
	}
	return Answer{Status: "handoff_requested", Line: line}, nil
}

// DefaultHandoffsPerKeyHour is a key's hand-offs an hour unless
// Config.HandoffsPerKeyHour sizes it: a busy agency's line, and far below
// what would bury its staff and its receivers.
const DefaultHandoffsPerKeyHour = 120

// tooManyHandoffs answers a hand-off over its key's budget.
var tooManyHandoffs = notDone(booking.CodeRateLimited, "this line has asked for too many call-backs this hour; tell the caller to call the agency directly")

// spendHandoff spends one of the key's hand-offs of the hour, counted for
// every API process by the store (without one, none is counted). A
// request_human call repeated in its conversation spends again: the
// store keeps one hand-off per conversation and topic, and the budget is
// far above what one call asks.
func (t *Tools) spendHandoff(ctx context.Context, conv string) (bool, error) {
	if t.cfg.FindBudget == nil {
		return true, nil
	}
	caller, _, _ := strings.Cut(conv, "/") // a conversation is scoped by its key (edge.Conversation)
	return t.cfg.FindBudget.SpendFindAttempt(ctx, "handoffs:"+caller, cmp.Or(t.cfg.HandoffsPerKeyHour, DefaultHandoffsPerKeyHour), time.Hour)
}

// callback is where a person calls the caller back: the number they
// gave (in E.164 where it reads as one), else caller ID; nil with neither.
func callback(a toolArgs) *booking.Callback {
	number := strings.TrimSpace(a.CallbackNumber)
	if e164, ok := phone.E164(number, ""); ok {
		number = e164
	}
	if number == "" {
		number = a.callerNumber
	}
	if number == "" {
		return nil
	}
	return &booking.Callback{Number: number, Window: strings.TrimSpace(a.CallbackWindow)}
}
