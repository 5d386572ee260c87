package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
)

// SendMessages sends the callers' due messages in order and marks each
// once it is sent; with none due it waits up to in.Wait for one. The text
// is built here, from the sealed contact, and never enters a workflow's
// history. A provider's failure holds that message back for a backoff of
// its own (Store.MessageFailed), so one failing number or a provider's
// bad minute delays no other. Each try leases its message (messageLease),
// so a second attempt Temporal starts while this one still sends (a slow
// provider past the heartbeat timeout) leaves it alone, and a run takes
// no message it has no time left to finish (messageBound). A message is
// marked right after its send; a try after a lost reply or a crash
// between the two looks the text up at Twilio first (Twilio takes no
// idempotency key, and an e-mail's stable Message-ID lets a mailbox tell a
// second copy).
func (a *Activities) SendMessages(ctx context.Context, in booking.MessagesInput) (booking.CountOutput, error) {
	deadline := time.Now().Add(in.Wait)
	n := 0
	for {
		due, err := a.Store.DueMessages(ctx, 20)
		if err != nil {
			return booking.CountOutput{Count: n}, storeError("due messages", "", err)
		}
		if len(due) == 0 {
			if done, err := idle(ctx, deadline, n); done || err != nil {
				return booking.CountOutput{Count: n}, err
			}
			continue
		}
		// Once a batch: a backlog's per-message yields would add up past
		// the activity's timeout. The agency's accounts too, read again
		// each batch so that one set meanwhile sends the next; a channel
		// it has no account for holds its messages (holdUntil).
		a.yieldToCommits(ctx)
		set, err := a.mirrors(ctx)
		if err != nil {
			return booking.CountOutput{Count: n}, err
		}
		for _, m := range due {
			if !roomFor(ctx) {
				return booking.CountOutput{Count: n}, nil // the next run goes on
			}
			activity.RecordHeartbeat(ctx, n)
			sent, err := a.sendMessage(ctx, set, m)
			if err != nil {
				return booking.CountOutput{Count: n}, err
			}
			if sent {
				n++
			}
		}
	}
}

// messageLease is how long one try holds its message: a look-up and a
// send, each bounded by its provider client's timeout (Twilio's 10 s),
// and the marks. A sender that dies mid-try leaves its message to the
// next try once it runs out.
const messageLease = 2 * time.Minute

// messageBound is what one message may take of the activity's time: a run
// takes no message it could not finish before its start-to-close timeout,
// which would have Temporal start another attempt while it still sends.
const messageBound = 25 * time.Second

// roomFor reports whether the activity has time left for one more message.
func roomFor(ctx context.Context) bool {
	dl := activity.GetInfo(ctx).Deadline
	return dl.IsZero() || time.Until(dl) >= messageBound
}

// QueueReminder queues the caller's reminder of a booking, when the
// saga's timer for it fires; the store queues it only while the booking
// is confirmed, so a cancel or a move that raced the timer sends none.
func (a *Activities) QueueReminder(ctx context.Context, in booking.ReminderInput) (booking.ReminderOutput, error) {
	queued, err := a.Store.QueueReminder(ctx, in.RequestKey, in.BookingID)
	if err != nil {
		return booking.ReminderOutput{}, storeError("queue reminder", in.RequestKey, err)
	}
	return booking.ReminderOutput{Queued: queued}, nil
}

// sendMessage ends one due message: sent, or why not. It reports whether
// a message went out.
func (a *Activities) sendMessage(ctx context.Context, set accounts.Set, m booking.Message) (bool, error) {
	done := func(st booking.MessageStatus, ch booking.Channel, id, why string) (bool, error) {
		a.messageCount(ctx, string(st))
		if err := a.Store.MessageDone(ctx, m.ID, st, ch, id, why); err != nil {
			return false, storeError("message done", m.RequestKey, err)
		}
		a.tellSaga(ctx, m, st)
		return st == booking.MessageSent, nil
	}
	c, err := a.Store.Contact(ctx, m.RequestKey)
	if errors.Is(err, booking.ErrNoContact) && m.Kind == booking.MessageNotBooked && m.Booking.Intent.Replaces != "" {
		c, err = a.Store.Contact(ctx, m.Booking.Intent.Replaces) // a move refused writes to its caller's
	}
	by, code := c.By, ""
	switch {
	case errors.Is(err, booking.ErrNoContact), errors.Is(err, booking.ErrContactErased):
		return done(booking.MessageNotConsented, "", "", "")
	case err != nil:
		return false, storeError("message contact", m.RequestKey, err)
	case m.Kind == booking.MessageCode:
		// The caller asked for it in a call: it goes by text to the
		// number the booking was made with, whatever they agreed to
		// about the other messages, and only while the code lives.
		var conv string
		var live bool
		if code, conv, live, err = a.Store.UnlockCode(ctx, m.UnlockID); err != nil {
			return false, storeError("unlock code", m.RequestKey, err)
		}
		if !live || c.Phone == "" {
			return done(booking.MessageStale, "", "", "")
		}
		c.Notify, by = booking.ChannelSMS, strings.SplitN(conv, "/", 2)[0] // a conversation is scoped by its key
	case !consented(c):
		return done(booking.MessageNotConsented, "", "", "")
	case m.Kind != booking.MessageCancelled && m.Kind != booking.MessageNotBooked && !m.Booking.Status.Live(),
		m.Kind == booking.MessageReminder && !time.Now().Before(m.Booking.Intent.StartsAt):
		return done(booking.MessageStale, "", "", "")
	}
	// As the caller reads it (a move of the agent alone is a
	// reassignment); the saga hears of it as queued.
	worded := m
	if worded.Kind, err = a.worded(ctx, m); err != nil {
		return false, err
	}
	if until, held := holdUntil(set, a.Quiet, c.Notify, m.Booking.Intent.TimeZone, worded.Kind.QuietHoursApply(m.CreatedAt, time.Now())); held {
		if err := a.Store.MessageHeld(ctx, m.ID, until); err != nil {
			return false, storeError("message held", m.RequestKey, err)
		}
		return false, nil
	}
	if c.Notify == booking.ChannelSMS {
		to, why, err := a.textTo(ctx, m, c.Phone, by)
		if err != nil {
			return false, err
		}
		if why != "" {
			return done(booking.MessageRefused, booking.ChannelSMS, "", why)
		}
		c.Phone = to
	}
	tries, mine, err := a.Store.MessageTry(ctx, m.ID, messageLease)
	switch {
	case err != nil:
		return false, storeError("message try", m.RequestKey, err)
	case !mine:
		return false, nil // another attempt has it, or ended it
	}
	id, err := a.deliver(ctx, set, worded, c, tries, code)
	switch {
	case errors.Is(err, sms.ErrOptedOut):
		// Twilio knew of a STOP before we did (its webhook lost, or sent
		// to another URL): kept, so that the next text is not tried.
		if _, serr := a.Store.StopTexts(ctx, c.Phone, true); serr != nil {
			return false, storeError("stop texts", m.RequestKey, serr)
		}
		return done(booking.MessageRefused, c.Notify, "", stoppedWhy)
	case errors.Is(err, sms.ErrUndeliverable), errors.Is(err, mail.ErrUndeliverable):
		return done(booking.MessageUndeliverable, c.Notify, "", err.Error())
	case err != nil:
		// The provider's 429 or 5xx, or a reply lost: this message backs
		// off on its own, and the others go on.
		a.messageCount(ctx, "failed")
		if ferr := a.Store.MessageFailed(ctx, m.ID, err.Error()); ferr != nil {
			return false, storeError("message failed", m.RequestKey, ferr)
		}
		return false, nil
	}
	return done(booking.MessageSent, c.Notify, id, "")
}

// stoppedWhy is a text refused for the caller's STOP.
const stoppedWhy = "the caller texted STOP; a START from the number lets texts go again"

// consented reports whether c agreed to a channel and gave its address.
func consented(c booking.Contact) bool {
	return c.Notify == booking.ChannelSMS && c.Phone != "" || c.Notify == booking.ChannelEmail && c.Email != ""
}

// tellSaga tells the booking's saga how its caller's message ended, for
// the operator's view. The store has it already; a saga closed or gone
// has no view to keep, and a failed signal loses only that view's line.
func (a *Activities) tellSaga(ctx context.Context, m booking.Message, st booking.MessageStatus) {
	if a.Temporal == nil || st != booking.MessageSent && st != booking.MessageUndeliverable {
		return
	}
	err := a.Temporal.SignalWorkflow(ctx, agency.Scoped(ctx, m.RequestKey), "", booking.SignalCallerMessaged, booking.MessageNotice{Kind: m.Kind, Status: st})
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		activity.GetLogger(ctx).Warn("the saga was not told of its caller's message", "request_key", m.RequestKey, "error", err)
	}
}

func (a *Activities) messageCount(ctx context.Context, result string) {
	a.metrics(ctx).Tagged(map[string]string{"result": result}).Counter("caller_messages_total").Inc(1)
}

// settleMessages is reconciliation's last pass over the callers'
// messages: it queues the confirmation of live bookings that have none
// queued, and when it queued some or messages have been due longer than
// the run's window it starts the queue's sender if it is not running (an
// operator may have terminated it). An agency other than the default one
// has its sender started by every run: each agency's outbox is sent by a
// sender of its own, which row-level security shows that outbox only. The outbox is the store's, so nothing else is lost.
func (a *Activities) settleMessages(ctx context.Context, in booking.StuckInput, prog *booking.StuckProgress) error {
	if prog.Phase > booking.StuckPhaseMessages {
		return nil
	}
	prog.Phase, prog.Token = booking.StuckPhaseMessages, nil
	rep := &prog.Report
	queued, err := a.Store.QueueMissingMessages(ctx, time.Now(), max(in.Limit, 1)*10)
	if err != nil {
		return storeError("reconcile messages", "", err)
	}
	rep.MessagesQueued = queued
	if queued > 0 {
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("caller messages: %d live bookings had none queued; queued", queued))
	}
	if rep.MessagesOverdue, err = a.Store.OverdueMessages(ctx, in.Before); err != nil {
		return storeError("reconcile messages", "", err)
	}
	// The default agency's sender starts with the worker; another's with
	// its agency's first run.
	set, err := a.mirrors(ctx)
	if err != nil {
		return err
	}
	if (rep.MessagesOverdue+queued > 0 || !agency.From(ctx).IsDefault()) && (set.SMS != nil || set.Mail != nil) {
		if err := EnsureMessages(ctx, a.Temporal, in.TaskQueue); err != nil {
			return fmt.Errorf("reconcile messages: %w", err)
		}
		rep.Details = appendDetail(rep.Details, fmt.Sprintf("caller messages: %d overdue, %d queued; the sender is running", rep.MessagesOverdue, queued))
	}
	prog.Phase++
	activity.RecordHeartbeat(ctx, *prog)
	return nil
}

// EnsureMessages makes sure the callers' messages of ctx's agency on
// taskQueue are being sent: the one sender's run, left as it is when it
// runs already. The worker calls it at start, reconciliation when
// messages are overdue.
func EnsureMessages(ctx context.Context, c client.Client, taskQueue string) error {
	o := client.StartWorkflowOptions{TaskQueue: taskQueue, WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	o.ID, o.TypedSearchAttributes, o.Priority = visibility.ForStart(ctx, booking.MessagesIDPrefix+taskQueue)
	if _, err := c.ExecuteWorkflow(ctx, o, booking.MessagesWorkflowName); err != nil {
		return fmt.Errorf("start %s: %w", o.ID, err)
	}
	return nil
}
