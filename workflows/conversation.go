package workflows

import (
	"encoding/hex"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/internal/booking"
)

// Names of the intent-key workflow and its update: one per
// conversation, id ConversationWorkflowID(conversationID).
const (
	ConversationWorkflowName = "Conversation"
	UpdateChoose             = "choose"
	UpdateRetire             = "retire"
	// conversationIdle is how long a conversation remembers its choices
	// after the last one; a phone call is over long before.
	conversationIdle = 24 * time.Hour
)

// ConversationWorkflowID is the workflow id of a conversation's key book.
func ConversationWorkflowID(conversationID string) string { return "conversation:" + conversationID }

// ConversationInput starts a conversation's key book.
type ConversationInput struct {
	ConversationID string
	// Carry holds the choices across continue-as-new.
	Carry []Choice
}

// ChooseResult is the key for a chosen intent.
type ChooseResult struct {
	RequestKey string
}

// RetireRequest forgets the key of a choice whose booking ended without
// being kept (refused, conflicting, cancelled), so choosing the same slot
// again starts afresh under a new key.
type RetireRequest struct {
	RequestKey string
}

// ConversationResult lists the choices a conversation made.
type ConversationResult struct {
	Choices []Choice
}

// Choice is one intent a caller settled on, and the key made for it.
type Choice struct {
	Fingerprint string
	RequestKey  string
}

// Conversation hands out request keys: the same intent chosen again in the
// same conversation gets the same key (a re-issued tool call, a barge-in),
// a new intent gets a new random key. The key is made once, recorded in
// history, and never changes.
func Conversation(ctx workflow.Context, in ConversationInput) (ConversationResult, error) {
	choices := in.Carry
	last := workflow.Now(ctx)
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateChoose, func(ctx workflow.Context, in booking.Intent) (ChooseResult, error) {
		last = workflow.Now(ctx)
		fp := hex.EncodeToString(in.Normalize().Fingerprint())
		for _, c := range choices {
			if c.Fingerprint == fp {
				return ChooseResult{RequestKey: c.RequestKey}, nil
			}
		}
		var key string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return uuid.NewString() }).Get(&key); err != nil {
			return ChooseResult{}, err
		}
		choices = append(choices, Choice{Fingerprint: fp, RequestKey: key})
		return ChooseResult{RequestKey: key}, nil
	}, workflow.UpdateHandlerOptions{Validator: func(in booking.Intent) error { return in.Validate() }})
	if err != nil {
		return ConversationResult{}, err
	}
	err = workflow.SetUpdateHandler(ctx, UpdateRetire, func(ctx workflow.Context, in RetireRequest) (ChooseResult, error) {
		last = workflow.Now(ctx)
		for i, c := range choices {
			if c.RequestKey == in.RequestKey {
				choices = append(choices[:i:i], choices[i+1:]...)
				break
			}
		}
		return ChooseResult{RequestKey: in.RequestKey}, nil
	})
	if err != nil {
		return ConversationResult{}, err
	}
	done := func() (ConversationResult, error) {
		err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return ConversationResult{Choices: choices}, err
	}
	for {
		seen := last
		idle, err := awaitUntil(ctx, conversationIdle, func() bool {
			return last != seen || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		})
		if err != nil {
			return ConversationResult{}, err
		}
		if !idle && last == seen {
			return done()
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if _, err := done(); err != nil {
				return ConversationResult{}, err
			}
			return ConversationResult{}, workflow.NewContinueAsNewError(ctx, Conversation, ConversationInput{ConversationID: in.ConversationID, Carry: choices})
		}
	}
}
