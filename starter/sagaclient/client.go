// Package sagaclient is how an agent backend talks to bookingsaga: every
// call goes through the Temporal client, and every answer is a typed
// receipt or a typed error. The agent words its reply from Receipt.Status
// alone.
package sagaclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/internal/booking"
	"github.com/bookingsaga/bookingsaga/internal/receipt"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Options configure a Client.
type Options struct {
	// TaskQueue is the workers' queue; empty means workflows.TaskQueue.
	TaskQueue string
	// Settings are passed to every new booking saga.
	Settings workflows.Settings
	// Alternatives is how many free slots a conflict receipt offers.
	Alternatives int
	// Silent is how long a saga may run without publishing a status
	// before Attention lists it (its workflow tasks are failing, say):
	// every saga publishes one within seconds of its first call.
	Silent time.Duration
}

// Client books through the booking sagas.
type Client struct {
	tc   client.Client
	opts Options
}

// New wraps a connected Temporal client.
func New(tc client.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = workflows.TaskQueue
	}
	if opts.Alternatives <= 0 {
		opts.Alternatives = 3
	}
	if opts.Silent <= 0 {
		opts.Silent = 5 * time.Minute
	}
	return &Client{tc: tc, opts: opts}
}

// Refusal is a request the store turned down (an unknown resource, a bad
// policy, ...): the request has to change, retrying cannot help.
type Refusal = booking.Rejection

// Availability returns free slots under the current policy, with the
// policy version and the time of the snapshot.
func (c *Client) Availability(ctx context.Context, q store.AvailabilityQuery) (store.Availability, error) {
	res, err := c.catalog(ctx, workflows.CatalogRequest{Availability: &q})
	if err != nil {
		return store.Availability{}, fmt.Errorf("availability %s: %w", q.PropertyID, err)
	}
	return *res.Availability, nil
}

// PutResource creates or updates a resource.
func (c *Client) PutResource(ctx context.Context, r store.Resource) error {
	if _, err := c.catalog(ctx, workflows.CatalogRequest{Resource: &r}); err != nil {
		return fmt.Errorf("put resource %s: %w", r.ID, err)
	}
	return nil
}

// PutPolicy makes a policy version current.
func (c *Client) PutPolicy(ctx context.Context, p store.Policy) error {
	if _, err := c.catalog(ctx, workflows.CatalogRequest{Policy: &p}); err != nil {
		return fmt.Errorf("put policy %s: %w", p.Version, err)
	}
	return nil
}

func (c *Client) catalog(ctx context.Context, req workflows.CatalogRequest) (workflows.CatalogResult, error) {
	run, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "catalog:" + uuid.NewString(),
		TaskQueue: c.opts.TaskQueue, WorkflowExecutionTimeout: time.Minute}, workflows.CatalogWorkflowName, req)
	if err != nil {
		return workflows.CatalogResult{}, err
	}
	var res workflows.CatalogResult
	return res, refusal(run.Get(ctx, &res))
}

// refusal unwraps a store refusal from a workflow error, so callers can
// match it with errors.As(err, **Refusal).
func refusal(err error) error {
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeRejected {
		var r booking.Rejection
		if appErr.Details(&r) == nil && r.Code != "" {
			return &r
		}
	}
	return err
}

// Select returns the request key for one caller's choice: the same intent
// in the same conversation always gets the same key, so a re-issued tool
// call cannot book twice; a new choice gets a new random key.
func (c *Client) Select(ctx context.Context, conversationID string, in booking.Intent) (string, error) {
	if conversationID == "" {
		return "", booking.Rejectf(booking.CodeMissingField, "conversation_id is required")
	}
	id := workflows.ConversationWorkflowID(conversationID)
	op := c.tc.NewWithStartWorkflowOperation(conversationStart(id, c.opts.TaskQueue), workflows.ConversationWorkflowName,
		workflows.ConversationInput{ConversationID: conversationID})
	h, err := c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: workflows.UpdateChoose, Args: []any{in},
			WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err != nil {
		return "", fmt.Errorf("select %s: %w", conversationID, err)
	}
	var res workflows.ChooseResult
	if err := h.Get(ctx, &res); err != nil {
		return "", fmt.Errorf("select %s: %w", conversationID, err)
	}
	return res.RequestKey, nil
}

// conversationStart joins a running key book, and starts a new one after
// the last closed (a day idle).
// Retire makes the conversation forget key: the booking under it ended
// without being kept, and the same choice should get a fresh key. A
// conversation that has closed has nothing to forget.
func (c *Client) Retire(ctx context.Context, conversationID, key string) error {
	h, err := c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.ConversationWorkflowID(conversationID),
		UpdateName: workflows.UpdateRetire, Args: []any{workflows.RetireRequest{RequestKey: key}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("retire %s in %s: %w", key, conversationID, err)
	}
	return nil
}

func conversationStart(id, queue string) client.StartWorkflowOptions {
	o := workflows.StartOptions(id, queue)
	o.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	return o
}

// Commit books req under key and returns the receipt. A conflict receipt
// carries fresh alternatives on the same day.
func (c *Client) Commit(ctx context.Context, key string, req workflows.CommitRequest) (receipt.Receipt, error) {
	if err := booking.ValidateKey(key); err != nil {
		return receipt.Receipt{}, err
	}
	r, err := workflows.Commit(ctx, c.tc, c.opts.TaskQueue, workflows.BookingInput{RequestKey: key, Settings: c.opts.Settings}, req)
	if err != nil {
		return receipt.Receipt{}, refusal(err)
	}
	if r.Status == receipt.StatusConflict {
		r.Alternatives = c.alternatives(ctx, req.Intent)
	}
	return r, nil
}

// alternatives looks for free slots of the same length around the asked
// time, nearest first. It is best effort: a conflict is still a conflict
// without them.
func (c *Client) alternatives(ctx context.Context, in booking.Intent) []receipt.Slot {
	av, err := c.Availability(ctx, store.AvailabilityQuery{PropertyID: in.PropertyID, AgentID: in.AgentID,
		ExtraResources: in.ExtraResources, From: in.StartsAt.Add(-6 * time.Hour), To: in.StartsAt.Add(6 * time.Hour),
		Duration: in.EndsAt.Sub(in.StartsAt)})
	if err != nil {
		return nil
	}
	slots := av.Slots
	dist := func(s store.Slot) time.Duration { return s.StartsAt.Sub(in.StartsAt).Abs() }
	var out []receipt.Slot
	for len(out) < c.opts.Alternatives && len(slots) > 0 {
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

// Status is the current receipt of key.
func (c *Client) Status(ctx context.Context, key string) (receipt.Receipt, error) {
	return workflows.Receipt(ctx, c.tc, key, nil)
}

// Cancel cancels the booking of key; cancelling twice is fine.
func (c *Client) Cancel(ctx context.Context, key string) (receipt.Receipt, error) {
	return workflows.Update(ctx, c.tc, key, workflows.UpdateCancel, workflows.CancelRequest{})
}

// Reschedule moves the booking of key to req under newKey: the new slot is
// booked first, and the old one released only once the new one is
// confirmed. The receipt is the new booking's, with Replaces set.
func (c *Client) Reschedule(ctx context.Context, key, newKey string, req workflows.CommitRequest) (receipt.Receipt, error) {
	if err := booking.ValidateKey(newKey); err != nil {
		return receipt.Receipt{}, err
	}
	r, err := workflows.Update(ctx, c.tc, key, workflows.UpdateReschedule, workflows.RescheduleRequest{NewRequestKey: newKey, Commit: req})
	return r, refusal(err)
}
