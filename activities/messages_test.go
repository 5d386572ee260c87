package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const (
	twilioAccount = "AC0123456789abcdef0123456789abcdef"
	twilioToken   = "0123456789abcdef0123456789abcdef"
	callerPhone   = "+33612345678"
)

// texting is setup with the activities texting through a fake Twilio.
func texting(t *testing.T) (*fixture, *smstest.Twilio) {
	t.Helper()
	f := setup(t)
	fake := smstest.New(twilioAccount, twilioToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { fake.Release(); srv.Close() })
	s, err := sms.New(sms.Config{AccountSid: twilioAccount, AuthToken: twilioToken, From: "+33700000000", Endpoint: srv.URL})
	require.NoError(t, err)
	f.acts.SMS = s
	require.NoError(t, f.acts.Store.UpsertResource(context.Background(), booking.Resource{ID: "prop", Kind: "property", Capacity: 1,
		TimeZone: "UTC", DisplayName: "the Marais flat", DisplayNames: map[string]string{"fr": "l'appartement du Marais"}}))
	return f, fake
}

// book commits key at hour with contact, sealed as the API seals it.
func (f *fixture) book(key string, hour int, c *booking.Contact) {
	f.t.Helper()
	ctx := context.Background()
	in := f.commitInput(key, "p1", hour)
	if c != nil {
		sealed, err := f.acts.Store.SealContact(ctx, key, *c)
		require.NoError(f.t, err)
		in.Contact = sealed
	}
	_, err := f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: in.CommitRequest, CalendarUnchecked: true})
	require.NoError(f.t, err)
}

// send runs the sender once and returns how many it sent, or its error.
func (f *fixture) send() (int, error) {
	f.t.Helper()
	v, err := f.env.ExecuteActivity(f.acts.SendMessages, booking.MessagesInput{})
	if err != nil {
		return 0, err
	}
	var out booking.CountOutput
	require.NoError(f.t, v.Get(&out))
	return out.Count, nil
}

func (f *fixture) statuses(key string) []booking.MessageStatus {
	f.t.Helper()
	msgs, err := f.acts.Store.Messages(context.Background(), key)
	require.NoError(f.t, err)
	var out []booking.MessageStatus
	for _, m := range msgs {
		out = append(out, m.Status)
	}
	return out
}

func TestAConsentingCallerIsTextedOnceInTheirLanguage(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_sms", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS, Lang: "fr"})
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = f.send()
	require.NoError(t, err)
	require.Zero(t, n, "a message marked sent is not sent again")

	_, err = f.acts.Store.Release(context.Background(), store.ReleaseRequest{RequestKey: "req_sms"})
	require.NoError(t, err)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)

	sent := fake.Sent()
	require.Len(t, sent, 2)
	ref := receipt.Reference("req_sms")
	for i, word := range []string{"est confirmée pour le", "est annulée"} {
		require.Equal(t, callerPhone, sent[i].To)
		require.True(t, strings.HasPrefix(sent[i].Body, "Votre visite de l'appartement du Marais "), sent[i].Body)
		require.Contains(t, sent[i].Body, word)
		require.Contains(t, sent[i].Body, ref)
		require.Contains(t, sent[i].Body, "10 h", "the local time")
		require.NotContains(t, sent[i].Body, "req_sms", "no internal id")
	}
	require.Equal(t, []booking.MessageStatus{booking.MessageSent, booking.MessageSent}, f.statuses("req_sms"))
}

func TestWithoutConsentNothingIsTexted(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_none", 10, &booking.Contact{Phone: callerPhone})
	f.book("req_anon", 12, nil)
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, fake.Sent())
	for _, key := range []string{"req_none", "req_anon"} {
		require.Equal(t, []booking.MessageStatus{booking.MessageNotConsented}, f.statuses(key), key)
	}
}

func TestAQuietNightHoldsTheTextBack(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	now := time.Now().UTC()
	since := now.Sub(now.Truncate(24 * time.Hour))
	f.acts.Quiet = booking.QuietHours{From: (since + 23*time.Hour) % (24 * time.Hour), To: (since + time.Hour) % (24 * time.Hour)}
	f.book("req_night", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, fake.Sent())
	require.Equal(t, []booking.MessageStatus{booking.MessageDue}, f.statuses("req_night"), "held to the quiet hours' end, not dropped")
	due, err := f.acts.Store.DueMessages(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, due, "not due before then")
}

func TestARefusedNumberEndsAndAFaultIsRetried(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	fake.Stop("+33699999999")
	f.book("req_stop", 10, &booking.Contact{Phone: "+33699999999", Notify: booking.ChannelSMS})
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n)
	msgs, err := f.acts.Store.Messages(context.Background(), "req_stop")
	require.NoError(t, err)
	require.Equal(t, booking.MessageUndeliverable, msgs[0].Status)
	require.Equal(t, "send sms: twilio 21610: the number can't take this message", msgs[0].LastError, "the code, never the number")

	f.book("req_retry", 12, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, Status: http.StatusServiceUnavailable}))
	_, err = f.send()
	require.ErrorContains(t, err, "twilio 20500 (http 503)", "Temporal retries the run with backoff")
	msgs, err = f.acts.Store.Messages(context.Background(), "req_retry")
	require.NoError(t, err)
	require.Equal(t, booking.MessageRecord{Kind: booking.MessageConfirmed, Status: booking.MessageDue, Attempts: 1,
		LastError: "send sms: twilio 20500 (http 503)"}, msgs[0])
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, fake.Sent(), 1)
}

// A reply lost after Twilio took the message is the one case that sends
// twice: Twilio has no idempotency key, so the retry can't know.
func TestALostReplyIsTheOneDuplicate(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_lost", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, DropAfterSave: true}))
	_, err := f.send()
	require.Error(t, err)
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	sent := fake.Sent()
	require.Len(t, sent, 2)
	require.True(t, strings.HasPrefix(sent[0].Body, "Your viewing of the Marais flat is confirmed"), sent[0].Body)
	require.Equal(t, sent[0].Body, sent[1].Body)
}
