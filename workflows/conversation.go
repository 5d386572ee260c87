package workflows

import (
	"encoding/hex"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/bookingsaga/bookingsaga/booking"
)

// conversationIdle is how long a conversation remembers its choices after
// the last one; a phone call is over long before.
const (
	conversationIdle = 24 * time.Hour
)

// ConversationWorkflowID is the workflow id of a conversation's key book.
func ConversationWorkflowID(conversationID string) string {
	return booking.ConversationIDPrefix + conversationID
}

// ConversationInput starts a conversation's key book.
type ConversationInput struct {
	ConversationID string
	// Carry holds the choices across continue-as-new.
	Carry []Choice
	// Made carries every key the conversation made, retired ones too.
	Made []string
}

// ChooseResult is the key for a chosen intent.
type ChooseResult struct {
	RequestKey string
	// Outstanding are the keys of other bookings in this conversation not
	// known to be settled: the caller must not start another booking while
	// one of them is pending.
	Outstanding []string
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
	// Booked is set once a booking was sent under the key, and Settled once
	// its outcome was seen to be known.
	Booked, Settled bool
}

// Conversation hands out request keys: the same intent chosen again in the
// same conversation gets the same key (a re-issued tool call, a barge-in),
// a new intent gets a new random key. The key is made once, recorded in
// history, and never changes.
func Conversation(ctx workflow.Context, in ConversationInput) (ConversationResult, error) {
	b := &keyBook{choices: in.Carry, made: in.Made, last: workflow.Now(ctx)}
	for _, c := range in.Carry { // a run continued by a build before Made
		if !slices.Contains(b.made, c.RequestKey) {
			b.made = append(b.made, c.RequestKey)
		}
	}
	if err := b.register(ctx); err != nil {
		return ConversationResult{}, err
	}
	choices := func() []Choice { return b.choices }
	last := func() time.Time { return b.last }
	done := func() (ConversationResult, error) {
		err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return ConversationResult{Choices: choices()}, err
	}
	for {
		seen := last()
		idle, err := awaitUntil(ctx, conversationIdle, "", func() bool {
			return last() != seen || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		})
		if err != nil {
			return ConversationResult{}, err
		}
		if !idle && last() == seen {
			return done()
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if _, err := done(); err != nil {
				return ConversationResult{}, err
			}
			return ConversationResult{}, workflow.NewContinueAsNewError(ctx, Conversation,
				ConversationInput{ConversationID: in.ConversationID, Carry: choices(), Made: b.made})
		}
	}
}

// keyBook is a conversation's choices and the handlers that change them.
type keyBook struct {
	choices []Choice
	// made is every key handed out, so a tool call can be held to its own
	// conversation's bookings after a choice is retired.
	made []string
	last time.Time
}

func (b *keyBook) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, booking.QueryKeys, func() ([]string, error) { return b.made, nil }); err != nil {
		return err
	}
	validate := workflow.UpdateHandlerOptions{Validator: func(in booking.Intent) error { return in.Validate() }}
	err := workflow.SetUpdateHandlerWithOptions(ctx, booking.UpdateChoose, func(ctx workflow.Context, in booking.Intent) (ChooseResult, error) {
		return b.choose(ctx, in, false)
	}, validate)
	if err == nil {
		err = workflow.SetUpdateHandlerWithOptions(ctx, booking.UpdateChooseToBook, func(ctx workflow.Context, in booking.Intent) (ChooseResult, error) {
			return b.choose(ctx, in, true)
		}, validate)
	}
	if err == nil {
		err = workflow.SetUpdateHandler(ctx, booking.UpdateSettle, func(ctx workflow.Context, in RetireRequest) (ChooseResult, error) {
			b.last = workflow.Now(ctx)
			if i := b.find(in.RequestKey); i >= 0 {
				b.choices[i].Settled = true
			}
			return ChooseResult{RequestKey: in.RequestKey}, nil
		})
	}
	if err == nil {
		// A handler, not a command: histories without the update replay
		// as before, so it needs no version marker.
		err = workflow.SetUpdateHandler(ctx, booking.UpdateAdopt, func(ctx workflow.Context, in RetireRequest) (ChooseResult, error) {
			b.last = workflow.Now(ctx)
			if !slices.Contains(b.made, in.RequestKey) {
				b.made = append(b.made, in.RequestKey)
			}
			return ChooseResult{RequestKey: in.RequestKey}, nil
		})
	}
	if err == nil {
		err = workflow.SetUpdateHandler(ctx, booking.UpdateRetire, func(ctx workflow.Context, in RetireRequest) (ChooseResult, error) {
			b.last = workflow.Now(ctx)
			if i := b.find(in.RequestKey); i >= 0 {
				b.choices = append(b.choices[:i:i], b.choices[i+1:]...)
			}
			return ChooseResult{RequestKey: in.RequestKey}, nil
		})
	}
	return err
}

// choose returns the key for in, made at random the first time it is
// chosen, with the other bookings whose outcome is still open.
func (b *keyBook) choose(ctx workflow.Context, in booking.Intent, book bool) (ChooseResult, error) {
	b.last = workflow.Now(ctx)
	fp := hex.EncodeToString(in.Normalize().Fingerprint())
	i := -1
	for j, c := range b.choices {
		if c.Fingerprint == fp {
			i = j
		}
	}
	if i < 0 {
		var key string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return uuid.NewString() }).Get(&key); err != nil {
			return ChooseResult{}, err
		}
		b.choices = append(b.choices, Choice{Fingerprint: fp, RequestKey: key})
		b.made = append(b.made, key)
		i = len(b.choices) - 1
	}
	out := ChooseResult{RequestKey: b.choices[i].RequestKey}
	for j, c := range b.choices {
		if j != i && c.Booked && !c.Settled {
			out.Outstanding = append(out.Outstanding, c.RequestKey)
		}
	}
	if book {
		b.choices[i].Booked, b.choices[i].Settled = true, false
	}
	return out, nil
}

func (b *keyBook) find(key string) int {
	for i, c := range b.choices {
		if c.RequestKey == key {
			return i
		}
	}
	return -1
}
