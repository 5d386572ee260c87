package systemtest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/apiclient"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const (
	callerNumber = "+33612345678"
	agencyNumber = "+33700000000"
)

// setupStops is a texting worker and the API, both on the deployment's
// fake Twilio account, whose webhook is the API's.
func setupStops(t *testing.T) (f *fixture, fake *smstest.Twilio, api, webhook string) {
	t.Helper()
	s, fake, fakeURL := fakeTwilioAt(t)
	f = sendingWorker(t, func(f *fixture) {
		f.acts.SMS = s
		f.mirrors.TwilioAccountSid, f.mirrors.TwilioAuthToken, f.mirrors.SMSFrom, f.mirrors.TwilioEndpoint =
			twilioAccount, twilioToken, agencyNumber, fakeURL
	})
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	api = f.serveAPI(app.EdgeConfig{})
	return f, fake, api, api + "/v1/tools/twilio/messages"
}

// postReply posts form to webhook as Twilio would, under signature.
func (f *fixture) postReply(webhook string, form url.Values, signature string) int {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, webhook, strings.NewReader(form.Encode()))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signature != "" {
		req.Header.Set("X-Twilio-Signature", signature)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	_ = res.Body.Close()
	return res.StatusCode
}

// lastMessage is key's message of kind once it ended.
func (f *fixture) lastMessage(key string, kind booking.MessageKind) booking.MessageRecord {
	f.t.Helper()
	var got booking.MessageRecord
	f.eventually(func() bool {
		for _, m := range f.messages(key) {
			if m.Kind == kind && m.Status != booking.MessageDue {
				got = m
				return true
			}
		}
		return false
	}, "the "+string(kind)+" message ended")
	return got
}

// A caller texts STOP: the webhook, signed as Twilio signs, records it,
// and the move that follows sends nothing to the number, refused before
// Twilio is asked; START lets the cancellation's text go. A reply
// unsigned, mis-signed or signed for another URL is refused and changes
// nothing; a STOP from a number that booked nothing writes nothing.
func TestAStopStopsTheTextsAndAStartStartsThem(t *testing.T) {
	t.Parallel()
	f, fake, api, webhook := setupStops(t)
	key := uuid.NewString()
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, key, 10).Status)
	require.Len(t, fake.Sent(), 1)

	stop := url.Values{"MessageSid": {"SM" + uuid.NewString()}, "AccountSid": {twilioAccount}, "From": {callerNumber},
		"To": {agencyNumber}, "Body": {"Stop"}}
	for name, sig := range map[string]string{
		"unsigned":         "",
		"mis-signed":       smstest.Sign("another-token", webhook, stop),
		"for another URL":  smstest.Sign(twilioToken, api+"/v1/agencies/lyon/tools/twilio/messages", stop),
		"for another body": smstest.Sign(twilioToken, webhook, url.Values{"From": {callerNumber}, "Body": {"START"}}),
	} {
		require.Equal(t, http.StatusUnauthorized, f.postReply(webhook, stop, sig), name)
	}
	stopped, err := f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.False(t, stopped, "no refused reply wrote anything")

	code, err := fake.Reply(webhook, "+33699999999", agencyNumber, "STOP")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "a number that booked nothing is answered")
	stopped, err = f.acts.Store.TextsStopped(f.ctx, "+33699999999", "")
	require.NoError(t, err)
	require.False(t, stopped, "and nothing is written for it")

	code, err = fake.Reply(webhook, callerNumber, agencyNumber, "stop")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	stopped, err = f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.True(t, stopped)

	asked := fake.Calls("messages.create")
	moved := uuid.NewString()
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", api+"/v1/bookings/"+key+"/reschedule", edge.RescheduleBody{NewRequestKey: moved,
		ExpectedPolicyVersion: policyVersion, Slot: bookingBody("", slot(t, 11)).Slot}, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	m := f.lastMessage(moved, booking.MessageRescheduled)
	require.Equal(t, booking.MessageRefused, m.Status, "the move's text after a STOP")
	require.Contains(t, m.LastError, "texted STOP")
	require.Equal(t, asked, fake.Calls("messages.create"), "Twilio was not asked")

	code, err = fake.Reply(webhook, callerNumber, agencyNumber, "START")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, http.StatusOK, f.call("POST", api+"/v1/bookings/"+moved+"/cancel", []byte(`{}`), &r))
	require.Equal(t, booking.MessageSent, f.lastMessage(moved, booking.MessageCancelled).Status, "the cancellation's text after a START")
	require.Len(t, fake.Sent(), 2)
}

// A STOP Twilio took but the webhook never told (Twilio's 21610 on the
// send) is kept all the same, so the next text is not tried; it goes
// with the caller's contact when that is erased.
func TestTwiliosUnsubscribedRefusalIsKeptAsAStop(t *testing.T) {
	t.Parallel()
	f, fake, api, _ := setupStops(t)
	fake.Stop(callerNumber)
	key := uuid.NewString()
	m := f.textedBooking(f.ctx, api, apiKey, key, 10)
	require.Equal(t, booking.MessageRefused, m.Status, "Twilio's 21610")
	stopped, err := f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.True(t, stopped)

	require.Equal(t, http.StatusOK, f.call("DELETE", api+"/v1/bookings/"+key+"/contact", nil, nil))
	stopped, err = f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.False(t, stopped, "the stop went with the erased contact")
}

// signedReply sets the agency of c's Twilio account in the vault, and is
// a STOP posted to webhook as Twilio posts it, signed under that
// account's token: the body, and the editor that signs it.
func (f *fixture) signedReply(ctx context.Context, c *apiclient.ClientWithResponses, webhook string) (*strings.Reader, apiclient.RequestEditorFn) {
	f.t.Helper()
	var account apiclient.MirrorAccount
	require.NoError(f.t, account.FromTwilioAccount(apiclient.TwilioAccount{AccountSid: twilioAccount, AuthToken: twilioToken, From: agencyNumber}))
	set, err := c.PutMirrorAccountWithResponse(ctx, apiclient.PutMirrorKindTwilio, account)
	require.NoError(f.t, err)
	require.NotNil(f.t, set.JSON200, string(set.Body))
	form := url.Values{"MessageSid": {"SM" + uuid.NewString()}, "From": {callerNumber}, "To": {agencyNumber}, "Body": {"STOP"}}
	sig := smstest.Sign(twilioToken, webhook, form)
	return strings.NewReader(form.Encode()), func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-Twilio-Signature", sig)
		return nil
	}
}

// A caller replies C to their reminder: the webhook records it on their
// booking, and the operator's timeline shows it; a C from a caller with
// no reminder texted writes nothing.
func TestACallersCToTheReminderIsRecorded(t *testing.T) {
	t.Parallel()
	f, fake, api, webhook := setupStops(t)
	key := uuid.NewString()
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, key, 10).Status)

	code, err := fake.Reply(webhook, callerNumber, agencyNumber, "c")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	b, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Nil(t, b.ReconfirmedAt, "no reminder was texted yet")

	_, err = f.pool.Exec(f.ctx, `INSERT INTO caller_message (request_key, kind, event_id, status, sent_at) VALUES ($1, 'reminder', 1, 'sent', now())`, key)
	require.NoError(t, err)
	code, err = fake.Reply(webhook, callerNumber, agencyNumber, " C ")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	var tl struct {
		Booking booking.Booking `json:"booking"`
	}
	require.Equal(t, http.StatusOK, f.call("GET", api+"/v1/ops/timeline/"+key, nil, &tl))
	require.NotNil(t, tl.Booking.ReconfirmedAt, "the operator sees the caller is coming")
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", api+"/v1/bookings/"+key, nil, &r))
	require.NotNil(t, r.ReconfirmedAt, "and the agent's status read")
	require.True(t, r.ReconfirmedAt.Equal(*tl.Booking.ReconfirmedAt))
}

// A property's address, set through the catalogue, is in its caller's
// text, in their language where the agency gave one; an address in a
// language without lines is refused and writes nothing.
func TestTheTextSaysWhereTheViewingIs(t *testing.T) {
	t.Parallel()
	f, fake, base, _ := setupStops(t)
	body := api.ResourceBody{Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test",
		Address: "12 rue des Rosiers, Paris", Addresses: map[string]string{"de": "Rosierstraße 12"}}
	var e edge.Error
	require.Equal(t, http.StatusBadRequest, f.call("PUT", base+"/v1/resources/paris-11", body, &e))
	body.Addresses = map[string]string{"fr": "12, rue des Rosiers, 75004 Paris"}
	require.Equal(t, http.StatusOK, f.call("PUT", base+"/v1/resources/paris-11", body, &map[string]any{}))
	var got api.ResourceAnswer
	require.Equal(t, http.StatusOK, f.call("GET", base+"/v1/resources/paris-11", nil, &got))
	require.Equal(t, body.Address, got.Address)

	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, base, apiKey, uuid.NewString(), 10).Status)
	require.Contains(t, fake.Sent()[0].Body, "(12 rue des Rosiers, Paris)", "in English, the agency's address")
}

// A signed reply posted again (Twilio's retry, or someone who captured
// it: the signature carries no time) acts once: a START replayed after a
// later STOP starts nothing. A reply with no MessageSid is refused.
func TestAReplyPostedAgainActsOnce(t *testing.T) {
	t.Parallel()
	f, _, api, webhook := setupStops(t)
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, uuid.NewString(), 10).Status)
	start := url.Values{"MessageSid": {"SM" + strings.ReplaceAll(uuid.NewString(), "-", "")}, "AccountSid": {twilioAccount},
		"From": {callerNumber}, "To": {agencyNumber}, "Body": {"START"}}
	sig := smstest.Sign(twilioToken, webhook, start)
	require.Equal(t, http.StatusOK, f.postReply(webhook, start, sig))
	stop := url.Values{"MessageSid": {"SM" + strings.ReplaceAll(uuid.NewString(), "-", "")}, "AccountSid": {twilioAccount},
		"From": {callerNumber}, "To": {agencyNumber}, "Body": {"STOP"}}
	require.Equal(t, http.StatusOK, f.postReply(webhook, stop, smstest.Sign(twilioToken, webhook, stop)))
	require.Equal(t, http.StatusOK, f.postReply(webhook, start, sig), "answered, as Twilio expects")
	stopped, err := f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.True(t, stopped, "the START replayed started nothing")

	bare := url.Values{"From": {callerNumber}, "To": {agencyNumber}, "Body": {"START"}}
	require.Equal(t, http.StatusBadRequest, f.postReply(webhook, bare, smstest.Sign(twilioToken, webhook, bare)))
	stopped, err = f.acts.Store.TextsStopped(f.ctx, callerNumber, "")
	require.NoError(t, err)
	require.True(t, stopped, "nor did one without its sid")
}
