package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const (
	twilioAccount = "AC0123456789abcdef0123456789abcdef"
	twilioToken   = "0123456789abcdef0123456789abcdef"
)

// setupTexting is setup with the worker texting callers through a fake
// Twilio, and the one sender running on the fixture's queue.
func setupTexting(t *testing.T) (*fixture, *smstest.Twilio) {
	t.Helper()
	f, fake := setupTextingWorker(t)
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	return f, fake
}

// setupTextingWorker is setupTexting before the sender is started.
func setupTextingWorker(t *testing.T) (*fixture, *smstest.Twilio) {
	t.Helper()
	s, fake := fakeTwilio(t)
	return sendingWorker(t, func(f *fixture) { f.acts.SMS = s }), fake
}

// fakeTwilio is a Twilio client on a fake account of the test's own.
func fakeTwilio(t *testing.T) (*sms.Sender, *smstest.Twilio) {
	t.Helper()
	s, fake, _ := fakeTwilioAt(t)
	return s, fake
}

// fakeTwilioAt is fakeTwilio, and the fake's URL.
func fakeTwilioAt(t *testing.T) (*sms.Sender, *smstest.Twilio, string) {
	t.Helper()
	fake := smstest.New(twilioAccount, twilioToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { fake.Release(); srv.Close() })
	s, err := sms.New(sms.Config{AccountSid: twilioAccount, AuthToken: twilioToken, From: "+33700000000", Endpoint: srv.URL})
	require.NoError(t, err)
	return s, fake, srv.URL
}

// sendingWorker is a fixture on a database of its own whose worker sends
// the callers' messages as wire sets them up; the queue's sender, once
// started, is stopped with the test.
func sendingWorker(t *testing.T, wire func(*fixture)) *fixture {
	t.Helper()
	f := fixtureOn(t, pgtest.New(t))
	f.seed()
	wire(f)
	f.worker = f.startWorker(worker.Options{})
	t.Cleanup(func() {
		_ = f.client.TerminateWorkflow(f.ctx, booking.MessagesIDPrefix+f.queue, "", "the test is over")
	})
	return f
}

func (f *fixture) messages(key string) []booking.MessageRecord {
	f.t.Helper()
	msgs, err := f.acts.Store.Messages(f.ctx, key)
	require.NoError(f.t, err)
	return msgs
}

func TestTheCallerIsTextedOnceForEveryChange(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 10))
	body.Contact = &edge.Contact{Name: "Camille", Phone: "+33612345678", Notify: "sms", Language: "fr-FR"}
	f.bookThroughAPI(url, body)
	f.eventually(func() bool { return len(fake.Sent()) == 1 }, "the confirmation texted")

	moved := uuid.NewString()
	f.moveThroughAPI(url, key, moved, 11)
	f.eventually(func() bool { return len(fake.Sent()) == 2 }, "the move texted")
	f.cancelThroughAPI(url, moved)
	f.cancelThroughAPI(url, moved)
	f.eventually(func() bool { return len(fake.Sent()) == 3 }, "the cancel texted")

	sent := fake.Sent()
	for i, want := range []struct{ key, words string }{{key, "est confirmée pour le"}, {moved, "est déplacée au"}, {moved, "est annulée"}} {
		require.Equal(t, "+33612345678", sent[i].To)
		require.Contains(t, sent[i].Body, want.words, sent[i].Body)
		require.Contains(t, sent[i].Body, receipt.Reference(want.key), "the reference of the booking it is about")
		require.Contains(t, sent[i].Body, "heure de Paris", "the local time with its zone")
	}
	require.Contains(t, sent[1].Body, "11 h", "the new time")
	sms := booking.MessageRecord{Status: booking.MessageSent, Channel: booking.ChannelSMS, Attempts: 1}
	want := func(kind booking.MessageKind, sid string) booking.MessageRecord {
		m := sms
		m.Kind, m.ProviderID = kind, sid
		return m
	}
	// Twilio has the text before the sender records it sent: wait for the
	// record (a CI run read the cancellation's between the two).
	f.eventually(func() bool {
		m := f.messages(moved)
		return len(m) == 2 && m[1].Status == booking.MessageSent
	}, "the cancellation's text recorded as sent")
	require.Equal(t, []booking.MessageRecord{want(booking.MessageConfirmed, sent[0].Sid)}, f.messages(key), "one per change, the provider's id kept")
	require.Equal(t, []booking.MessageRecord{want(booking.MessageRescheduled, sent[1].Sid), want(booking.MessageCancelled, sent[2].Sid)}, f.messages(moved))
	for _, m := range sent {
		require.False(t, strings.Contains(m.Body, key) || strings.Contains(m.Body, "paris-11"), "no internal id: %s", m.Body)
	}
	f.record(booking.MessagesIDPrefix+f.queue, "caller_messages_texted")
}

func TestAContactWithoutConsentOrWithABadNumberIsAnswered(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	url := f.serveAPI(app.EdgeConfig{})
	quiet := uuid.NewString()
	body := bookingBody(quiet, slot(t, 10))
	body.Contact = &edge.Contact{Phone: "06 12 34 56 78"}
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	f.eventually(func() bool {
		m := f.messages(quiet)
		return len(m) == 1 && m[0].Status == booking.MessageNotConsented
	}, "no consent, no text")

	for notify, phone := range map[string]string{"sms": "06 12 34 56 78", "fax": "+33612345678"} {
		body := bookingBody(uuid.NewString(), slot(t, 12))
		body.Contact = &edge.Contact{Phone: phone, Notify: notify}
		var refusal struct{ Code string }
		require.Equal(t, http.StatusBadRequest, f.call("POST", url+"/v1/bookings", body, &refusal), notify)
		require.Equal(t, string(booking.CodeInvalidContact), refusal.Code)
	}
	require.Equal(t, 1, f.bookings(), "a refused contact books nothing")
	require.Empty(t, fake.Sent())
}

// Reconciliation sends what no sender sent: a booking with a contact and
// no message queued (made before the outbox) is queued, and messages left
// due because the queue's sender was not running start it.
func TestReconciliationSendsWhatNoSenderSent(t *testing.T) {
	t.Parallel()
	f, fake := setupTextingWorker(t) // and no sender started
	url := f.serveAPI(app.EdgeConfig{})
	var keys []string
	for i, phone := range []string{"+33612345678", "+33687654321"} {
		key := uuid.NewString()
		body := bookingBody(key, slot(t, 10+i))
		body.Contact = &edge.Contact{Phone: phone, Notify: "sms", Language: "en"}
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
		require.Equal(t, receipt.StatusConfirmed, r.Status)
		keys = append(keys, key)
	}
	// The first as a booking from before the outbox: nothing queued.
	_, err := f.pool.Exec(f.ctx, "DELETE FROM caller_message WHERE request_key = $1", keys[0])
	require.NoError(t, err)
	require.Empty(t, fake.Sent())

	rep := f.reconcile()
	require.Equal(t, 1, rep.Stuck.MessagesQueued)
	require.Equal(t, 1, rep.Stuck.MessagesOverdue, "the second's, queued by its booking")
	f.eventually(func() bool { return len(fake.Sent()) == 2 }, "both texted once the sender runs")
	for _, key := range keys {
		require.Equal(t, booking.MessageSent, f.messages(key)[0].Status)
	}
	require.Zero(t, f.reconcile().Stuck.MessagesQueued, "a second run queues nothing")
}
