package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// setupMailing is setup with the worker e-mailing callers through an
// SMTP sink, and the one sender running on the fixture's queue.
func setupMailing(t *testing.T) (*fixture, *mailtest.Sink) {
	t.Helper()
	sink := mailtest.New("agency", "s3cret")
	addr, err := sink.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Close() })
	m, err := mail.New(mail.Config{Addr: addr, Username: "agency", Password: "s3cret", From: "visites@agence.example",
		TLS: mail.TLSNone, Timeout: 5 * time.Second})
	require.NoError(t, err)
	f := sendingWorker(t, func(f *fixture) { f.acts.Mail = m })
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	return f, sink
}

// callerNotified is the saga's BookingCallerNotified, and whether it is set.
func (f *fixture) callerNotified(key string) (bool, bool) {
	f.t.Helper()
	desc, err := f.client.DescribeWorkflowExecution(f.ctx, key, "")
	require.NoError(f.t, err)
	p, ok := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[visibility.AttrCallerNotified.GetName()]
	if !ok {
		return false, false
	}
	var v bool
	require.NoError(f.t, converter.GetDefaultDataConverter().FromPayload(p, &v))
	return v, true
}

func invitationOf(t *testing.T, m mailtest.Message) (uid, calendar string) {
	t.Helper()
	p, ok := m.Part("text/calendar")
	require.True(t, ok, "%s has an invitation", m.Subject)
	uid = p.Body[strings.Index(p.Body, "UID:"):]
	return uid[:strings.Index(uid, "\r\n")], p.Body
}

// A caller who chose e-mail gets one per change with the invitation that
// keeps their calendar in step, re-sent book calls add none, and the
// operator's view says they were told.
func TestTheCallerIsEmailedOnceForEveryChange(t *testing.T) {
	t.Parallel()
	f, sink := setupMailing(t)
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 10))
	body.Contact = &edge.Contact{Name: "Camille", Email: "camille@example.org", Notify: "email", Language: "en"}
	f.bookThroughAPI(url, body)
	f.eventually(func() bool { return len(sink.Received()) == 1 }, "the confirmation e-mailed")
	f.eventually(func() bool { v, ok := f.callerNotified(key); return ok && v }, "the saga says the caller was told")
	require.Contains(t, f.details(key), "| Caller | last message sent |")

	moved := uuid.NewString()
	f.moveThroughAPI(url, key, moved, 11)
	f.eventually(func() bool { return len(sink.Received()) == 2 }, "the move e-mailed")
	f.cancelThroughAPI(url, moved)
	f.eventually(func() bool { return len(sink.Received()) == 3 }, "the cancel e-mailed")

	got := sink.Received()
	first, _ := invitationOf(t, got[0])
	for i, want := range []string{"Viewing confirmed: ", "Viewing moved: ", "Viewing cancelled: "} {
		require.Equal(t, []string{"camille@example.org"}, got[i].To)
		require.True(t, strings.HasPrefix(got[i].Subject, want), got[i].Subject)
		uid, cal := invitationOf(t, got[i])
		require.Equal(t, first, uid, "one UID for the viewing")
		require.Contains(t, cal, "\r\nSEQUENCE:"+string(rune('0'+i))+"\r\n")
	}
	_, cancel := invitationOf(t, got[2])
	require.Contains(t, cancel, "METHOD:CANCEL")
	require.Equal(t, 1, len(f.messages(key)), "one message per change")
	// The sink has the mail before the worker hears it was taken and
	// marks it sent.
	var tl booking.Timeline
	f.eventually(func() bool {
		var err error
		tl, err = f.catalog.Timeline(f.ctx, moved)
		require.NoError(t, err)
		return len(tl.Messages) == 2 && tl.Messages[1].Status != booking.MessageDue
	}, "the cancel's mail marked sent")
	require.Equal(t, booking.MessageRecord{Kind: booking.MessageCancelled, Status: booking.MessageSent, Channel: booking.ChannelEmail,
		ProviderID: got[2].MessageID, Attempts: 1}, tl.Messages[1])
}

// A mailbox that does not exist ends the message undeliverable, and the
// operator's filter finds the saga.
func TestAnUndeliverableCallerIsInTheOperatorsFilter(t *testing.T) {
	t.Parallel()
	f, sink := setupMailing(t)
	sink.Refuse("nobody@example.org")
	url := f.serveAPI(app.EdgeConfig{})
	key := uuid.NewString()
	body := bookingBody(key, slot(t, 12))
	body.Contact = &edge.Contact{Email: "nobody@example.org", Notify: "email"}
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status, "a message never makes or unmakes a booking")
	f.eventually(func() bool { v, ok := f.callerNotified(key); return ok && !v }, "the saga says the caller could not be told")
	query := visibility.AttentionQuery(agency.Default, time.Now().Add(-time.Hour)) + " AND TaskQueue = \"" + f.queue + "\""
	f.eventually(func() bool {
		res, err := f.client.ListWorkflow(f.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(res.GetExecutions()) == 1 && res.GetExecutions()[0].GetExecution().GetWorkflowId() == key
	}, "the attention filter finds it")
	msgs := f.messages(key)
	require.Equal(t, booking.MessageUndeliverable, msgs[0].Status)
	require.NotContains(t, msgs[0].LastError, "nobody@", "no address kept in the error")
	require.Empty(t, sink.Received())
}

// A policy's reminder is checked, and writes nothing when out of range.
func TestAPolicysReminderIsChecked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	for _, minutes := range []int{-1, 7*24*60 + 1, 1 << 62} {
		var e edge.Error
		body := api.PolicyBody{Version: "policy-r", SlotMinutes: 30, OpensAt: "08:00", ClosesAt: "20:00", HoldTTLMinutes: 10, ReminderMinutes: &minutes}
		require.Equal(t, http.StatusBadRequest, f.call("PUT", url+"/v1/policy", body, &e), minutes)
		require.Equal(t, "reminder_minutes must be whole minutes from 0 (none) to 10080", e.Message)
	}
	var now api.PolicyBody
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/policy", nil, &now))
	require.Equal(t, policyVersion, now.Version, "nothing was written")
	none := 0
	body := api.PolicyBody{Version: "policy-r", SlotMinutes: 30, OpensAt: "08:00", ClosesAt: "20:00", HoldTTLMinutes: 10, ReminderMinutes: &none}
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/policy", body, &now))
	require.Equal(t, 0, *now.ReminderMinutes, "none")
}
