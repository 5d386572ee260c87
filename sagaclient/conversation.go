package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// A conversation's pending rule, the article's: a booking whose outcome
// is not known yet holds its conversation, so no other booking starts in
// it until that one is settled. Every entry point that chooses or books
// keeps it here: the voice tools' select_slot, book and
// reschedule_booking, and POST /v1/intents and POST /v1/bookings.

// HeldError is a call not sent because an earlier booking of its
// conversation is still pending (receipt.HeldError).
type HeldError = receipt.HeldError

// Pick is the key for a choice of the conversation that books nothing
// yet (select_slot, POST /v1/intents): the same intent always gets the
// same key. An earlier booking still pending is a *HeldError.
func (c *Client) Pick(ctx context.Context, conv string, in booking.Intent) (string, error) {
	return c.keyFor(ctx, conv, in, false)
}

// BookIn sends call, a booking call for in under the conversation's key
// for it (a commit, a hold, a reschedule), and tells the conversation how
// it came out. An earlier booking still pending is a *HeldError, and call
// is not made.
func (c *Client) BookIn(ctx context.Context, conv string, in booking.Intent,
	call func(ctx context.Context, key string) (receipt.Receipt, error)) (string, receipt.Receipt, error) {
	key, err := c.keyFor(ctx, conv, in, true)
	if err != nil {
		return "", receipt.Receipt{}, err
	}
	r, err := call(ctx, key)
	c.settle(ctx, conv, key, r, err)
	return key, r, err
}

// keyFor chooses in (marked as booking when book is set) and applies the
// rule. A call held back sends nothing, so its own key is settled at once:
// left marked, it would hold the conversation itself.
func (c *Client) keyFor(ctx context.Context, conv string, in booking.Intent, book bool) (string, error) {
	ch, err := c.Choose(ctx, conv, in, book)
	if err != nil {
		return "", err
	}
	if len(ch.Outstanding) == 0 {
		return ch.RequestKey, nil
	}
	earlier, err := c.Pending(ctx, conv, ch.Outstanding)
	if err != nil || earlier == nil {
		return ch.RequestKey, err
	}
	if book {
		c.tell(ctx, conv, ch.RequestKey, c.Settle)
	}
	return "", &HeldError{Earlier: *earlier}
}

// settle tells the conversation how a booking call under key came out:
// pending, it stays open and holds the conversation; ended unkept, the
// key is retired, so the same choice again (a slot that freed up, a
// refreshed policy) does not meet this outcome; otherwise (decided, or
// nothing sent) it no longer holds the conversation.
func (c *Client) settle(ctx context.Context, conv, key string, r receipt.Receipt, err error) {
	switch {
	case err == nil && r.Status == receipt.StatusPending:
	case err == nil && final(r):
		c.tell(ctx, conv, key, c.Retire)
	default:
		c.tell(ctx, conv, key, c.Settle)
	}
}

// final reports a receipt whose key can never book: a conflict, or a
// refusal that retrying cannot change.
func final(r receipt.Receipt) bool {
	return r.Status == receipt.StatusConflict || r.Status == receipt.StatusRejected && (r.Reason == nil || !r.Reason.Retryable)
}

// tell updates the conversation's bookkeeping about a key once its booking
// call is answered. A failure is logged, never answered: the caller hears
// what happened to the booking, and the conversation's next choice
// re-reads an unsettled key anyway.
func (c *Client) tell(ctx context.Context, conv, key string, update func(context.Context, string, string) error) {
	if err := update(ctx, conv, key); err != nil {
		c.opts.Log.Warn("conversation not told how its booking came out", zap.String("request_key", key), zap.Error(err))
	}
}

// Forget tells the conversation that key will not hold it: its booking
// was let go (a cancel), or neither Temporal nor the store knows it.
func (c *Client) Forget(ctx context.Context, conv, key string) { c.tell(ctx, conv, key, c.Retire) }

// Select returns the request key for one caller's choice: the same intent
// in the same conversation always gets the same key, so a re-issued tool
// call cannot book twice; a new choice gets a new random key.
func (c *Client) Select(ctx context.Context, conversationID string, in booking.Intent) (string, error) {
	ch, err := c.Choose(ctx, conversationID, in, false)
	return ch.RequestKey, err
}

// Choose is Select with the conversation's open bookings: the keys of
// earlier bookings whose outcome is not known to be settled. With book
// set, the key is remembered as booked until Settle.
func (c *Client) Choose(ctx context.Context, conversationID string, in booking.Intent, book bool) (workflows.ChooseResult, error) {
	if conversationID == "" {
		return workflows.ChooseResult{}, booking.Rejectf(booking.CodeMissingField, "conversation_id is required")
	}
	update := booking.UpdateChoose
	if book {
		update = booking.UpdateChooseToBook
	}
	// A choice gets a booking call's budget, no more: a hold (a choice,
	// then a commit) must fit in what a voice platform waits, even when no
	// worker takes the choice (a deploy).
	var res workflows.ChooseResult
	if err := c.toConversation(ctx, conversationID, update, in, &res); err != nil {
		return workflows.ChooseResult{}, fmt.Errorf("select %s: %w", conversationID, err)
	}
	return res, nil
}

// toConversation sends update with arg to the conversation's key book,
// starting it if need be, within a booking call's budget, and reads the
// result into out (nil: none wanted).
func (c *Client) toConversation(ctx context.Context, conversationID, update string, arg, out any) error {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	start := conversationStart(ctx, conversationID, c.opts.TaskQueue)
	op := c.tc.NewWithStartWorkflowOperation(start, booking.ConversationWorkflowName,
		workflows.ConversationInput{ConversationID: conversationID})
	// The update names the start's id so that its arguments are sealed
	// under the agency's payload key (updateWithStart).
	h, err := c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: start.ID, UpdateName: update, Args: []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err != nil {
		return err
	}
	return h.Get(ctx, out)
}

// Pending returns the receipt of the first of keys still pending
// reconciliation, for the conversation to wait on; the others are
// settled, and forgotten as open. Nil means the conversation goes on. A
// key that neither Temporal nor the store knows is a booking still on its
// way (its call has not reached Temporal yet): it is pending too, and
// stays open. The caller settles a key its call answered without sending
// anything (Settle), and booking_status does for one a crash left.
func (c *Client) Pending(ctx context.Context, conversationID string, keys []string) (*receipt.Receipt, error) {
	for _, key := range keys {
		r, err := c.opts.Read(ctx, key)
		if errors.Is(err, ErrNotFound) {
			p := receipt.Pending(key)
			return &p, nil
		}
		if err != nil {
			return nil, err
		}
		if r.Status == receipt.StatusPending {
			return &r, nil
		}
		if err := c.conversationUpdate(ctx, conversationID, booking.UpdateSettle, key); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// Made reports whether conversationID made key: a voice tool may act only
// on its own conversation's bookings.
func (c *Client) Made(ctx context.Context, conversationID, key string) (bool, error) {
	keys, err := c.Keys(ctx, conversationID) // none for a conversation that never chose anything
	return slices.Contains(keys, key), err
}

// Adopt makes key, a booking of an earlier call, this conversation's own,
// starting the conversation's key book if need be: its caller proved the
// booking theirs. Only the key goes to Temporal.
func (c *Client) Adopt(ctx context.Context, conversationID, key string) error {
	if err := c.toConversation(ctx, conversationID, booking.UpdateAdopt, workflows.RetireRequest{RequestKey: key}, nil); err != nil {
		return fmt.Errorf("adopt %s in %s: %w", key, conversationID, err)
	}
	return nil
}

// Keys are the request keys the conversation made or adopted; none for
// a conversation that chose nothing.
func (c *Client) Keys(ctx context.Context, conversationID string) ([]string, error) {
	v, err := c.tc.QueryWorkflow(ctx, conversationWorkflow(ctx, conversationID), "", booking.QueryKeys)
	if notFound(err) {
		return nil, nil
	}
	var keys []string
	if err == nil {
		err = v.Get(&keys)
	}
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", conversationID, err)
	}
	return keys, nil
}

// Settle tells the conversation that key's outcome is known.
func (c *Client) Settle(ctx context.Context, conversationID, key string) error {
	return c.conversationUpdate(ctx, conversationID, booking.UpdateSettle, key)
}

// Retire makes the conversation forget key: the booking under it ended
// without being kept, and the same choice should get a fresh key. A
// conversation that has closed has nothing to forget.
func (c *Client) Retire(ctx context.Context, conversationID, key string) error {
	return c.conversationUpdate(ctx, conversationID, booking.UpdateRetire, key)
}

func (c *Client) conversationUpdate(ctx context.Context, conversationID, update, key string) error {
	h, err := c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: conversationWorkflow(ctx, conversationID),
		UpdateName: update, Args: []any{workflows.RetireRequest{RequestKey: key}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if notFound(err) {
		return nil
	}
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("%s %s in %s: %w", update, key, conversationID, err)
	}
	return nil
}

// conversationWorkflow is the workflow id of the key book of
// conversationID, in the space of ctx's agency.
func conversationWorkflow(ctx context.Context, conversationID string) string {
	return agency.Scoped(ctx, workflows.ConversationWorkflowID(conversationID))
}

// conversationStart joins a running key book, and starts a new one after
// the last closed (a day idle).
func conversationStart(ctx context.Context, conversationID, queue string) client.StartWorkflowOptions {
	o := StartOptions(ctx, workflows.ConversationWorkflowID(conversationID), queue)
	o.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	o.StaticSummary = "Conversation · the request keys of one caller's choices"
	return o
}

// StartConversation starts the key book of a conversation the service
// names itself (a minted id, for an MCP client that sends no call id of
// its own), so that KnownConversation knows it from its first call on.
func (c *Client) StartConversation(ctx context.Context, conversationID string) error {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	_, err := c.tc.ExecuteWorkflow(ctx, conversationStart(ctx, conversationID, c.opts.TaskQueue),
		booking.ConversationWorkflowName, workflows.ConversationInput{ConversationID: conversationID})
	if err != nil {
		return fmt.Errorf("start conversation %s: %w", conversationID, err)
	}
	return nil
}

// KnownConversation reports whether Temporal has (or had) the key book of
// conversationID: whether the service gave out that id.
func (c *Client) KnownConversation(ctx context.Context, conversationID string) (bool, error) {
	_, err := c.tc.DescribeWorkflowExecution(ctx, conversationWorkflow(ctx, conversationID), "")
	switch {
	case notFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("known conversation %s: %w", conversationID, err)
	}
	return true, nil
}
