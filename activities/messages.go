package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Texter sends one text message and returns the provider's id for it;
// *sms.Sender is one. A number refused for good is sms.ErrUndeliverable.
type Texter interface {
	Send(to, body string) (string, error)
}

// SendMessages sends the callers' due messages in order and marks each
// once it is sent; with none due it waits up to in.Wait for one. The text
// is built here, from the sealed contact, and never enters a workflow's
// history. A provider's failure stops the run with an error and Temporal
// retries it with backoff; a message is marked right after its send, so
// only a crash between the two sends it twice (Twilio has no idempotency
// key to stop that).
func (a *Activities) SendMessages(ctx context.Context, in booking.MessagesInput) (booking.CountOutput, error) {
	if a.SMS == nil {
		return booking.CountOutput{}, nil
	}
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
		for _, m := range due {
			activity.RecordHeartbeat(ctx, n)
			sent, err := a.sendMessage(ctx, m)
			if err != nil {
				return booking.CountOutput{Count: n}, err
			}
			if sent {
				n++
			}
		}
	}
}

// sendMessage ends one due message: sent, or why not. It reports whether
// a message went out.
func (a *Activities) sendMessage(ctx context.Context, m booking.Message) (bool, error) {
	done := func(st booking.MessageStatus, ch booking.Channel, id, why string) (bool, error) {
		a.messageCount(string(st))
		if err := a.Store.MessageDone(ctx, m.ID, st, ch, id, why); err != nil {
			return false, storeError("message done", m.RequestKey, err)
		}
		return st == booking.MessageSent, nil
	}
	c, err := a.Store.Contact(ctx, m.RequestKey)
	switch {
	case errors.Is(err, booking.ErrNoContact), errors.Is(err, booking.ErrContactErased):
		return done(booking.MessageNotConsented, "", "", "")
	case err != nil:
		return false, storeError("message contact", m.RequestKey, err)
	case c.Notify != booking.ChannelSMS || c.Phone == "":
		return done(booking.MessageNotConsented, "", "", "")
	case m.Kind != booking.MessageCancelled && !m.Booking.Status.Live():
		return done(booking.MessageStale, "", "", "")
	}
	if until, quiet := a.quietUntil(m.Booking.Intent.TimeZone); quiet {
		if err := a.Store.MessageHeld(ctx, m.ID, until); err != nil {
			return false, storeError("message held", m.RequestKey, err)
		}
		return false, nil
	}
	body, err := a.messageText(ctx, m, c)
	if err != nil {
		return false, err
	}
	id, err := a.SMS.Send(c.Phone, body)
	if errors.Is(err, sms.ErrUndeliverable) {
		return done(booking.MessageUndeliverable, booking.ChannelSMS, "", err.Error())
	}
	if err != nil {
		a.messageCount("failed")
		if ferr := a.Store.MessageFailed(ctx, m.ID, err.Error()); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return false, fmt.Errorf("message %d of %s: %w", m.ID, m.RequestKey, err)
	}
	return done(booking.MessageSent, booking.ChannelSMS, id, "")
}

// quietUntil reports whether it is quiet hours now in zone, and until when.
func (a *Activities) quietUntil(zone string) (time.Time, bool) {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc = time.UTC // the store keeps only zones it could load
	}
	return a.Quiet.Until(time.Now(), loc)
}

// messageText words m in the language the booking was made in, with the
// property's name in it.
func (a *Activities) messageText(ctx context.Context, m booking.Message, c booking.Contact) (string, error) {
	lang, err := speech.ParseLang(c.Lang)
	if err != nil {
		lang = speech.English
	}
	names := map[string]string{}
	res, err := a.Store.Resource(ctx, m.Booking.Intent.PropertyID)
	var rej *booking.Rejection
	if err != nil && !errors.As(err, &rej) { // a resource gone since is "the property"
		return "", fmt.Errorf("message property %s: %w", m.RequestKey, err)
	}
	if all := res.SpokenNames(); all[string(lang)] != "" {
		names[res.ID] = all[string(lang)]
	} else if all[""] != "" {
		names[res.ID] = all[""]
	}
	return speech.Speaker{Lang: lang, Names: names}.Message(m.Kind, m.Booking), nil
}

func (a *Activities) messageCount(result string) {
	a.metrics().Tagged(map[string]string{"result": result}).Counter("caller_messages_total").Inc(1)
}
