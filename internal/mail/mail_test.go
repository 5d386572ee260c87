package mail_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
)

const caller = "caller@example.org"

// setup runs a sink that asks for a login, and a sender logged in to it.
func setup(t *testing.T, password string) (*mail.Sender, *mailtest.Sink) {
	t.Helper()
	sink := mailtest.New("agency", "s3cret")
	addr, err := sink.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Close() })
	s, err := mail.New(mail.Config{Addr: addr, Username: "agency", Password: password, From: "visites@agence.example",
		TLS: mail.TLSNone, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return s, sink
}

func message(t *testing.T, id string) mail.Mail {
	t.Helper()
	paris, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	start := time.Date(2026, 12, 8, 10, 0, 0, 0, paris)
	return mail.Mail{To: caller, Subject: "Votre visite est confirmée", Text: "Votre visite de l'appartement du Marais est confirmée.",
		MessageID: id, Invite: &mail.Invite{UID: "bs-1@bookingsaga", Start: start, End: start.Add(30 * time.Minute),
			Zone: "Europe/Paris", Summary: "Visite", Stamp: start}}
}

func TestAMailCarriesItsTextAndInvitation(t *testing.T) {
	t.Parallel()
	s, sink := setup(t, "s3cret")
	id, err := s.Send(context.Background(), message(t, "bs-1.confirmed@bookingsaga"))
	require.NoError(t, err)
	require.Equal(t, "bs-1.confirmed@bookingsaga", id)
	got := sink.Received()
	require.Len(t, got, 1)
	m := got[0]
	require.Equal(t, []string{caller}, m.To)
	require.Equal(t, "bs-1.confirmed@bookingsaga", m.MessageID)
	require.Equal(t, "Votre visite est confirmée", m.Subject, "a non-ASCII subject, encoded and read back")
	text, ok := m.Part("text/plain")
	require.True(t, ok)
	require.Contains(t, text.Body, "appartement du Marais est confirmée")
	cal, ok := m.Part("text/calendar")
	require.True(t, ok, "the alternative calendar clients act on: %+v", m.Parts)
	require.Contains(t, cal.Type, "method=REQUEST")
	require.Contains(t, cal.Body, "UID:bs-1@bookingsaga\r\n")
	require.Contains(t, cal.Body, "ATTENDEE;ROLE=REQ-PARTICIPANT;RSVP=FALSE:mailto:"+caller)
	require.Contains(t, cal.Body, "ORGANIZER:mailto:visites@agence.example")
	att, ok := m.Part("application/ics")
	require.True(t, ok)
	require.Equal(t, "invite.ics", att.Filename)
	require.Equal(t, cal.Body, att.Body)
}

func TestARefusedMailboxIsUndeliverableAndAFaultIsNot(t *testing.T) {
	t.Parallel()
	s, sink := setup(t, "s3cret")
	sink.Refuse(caller)
	_, err := s.Send(context.Background(), message(t, "a@b"))
	require.ErrorIs(t, err, mail.ErrUndeliverable)
	require.NotContains(t, err.Error(), caller, "no address in errors")

	s, sink = setup(t, "s3cret")
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		require.NoError(t, sink.Inject(fakeserver.Fault{Op: mailtest.Op, Times: 1, Status: status}))
		_, err = s.Send(context.Background(), message(t, "a@b"))
		require.Error(t, err)
		require.False(t, errors.Is(err, mail.ErrUndeliverable), "%d is retried: %v", status, err)
	}
	require.Empty(t, sink.Received())

	require.NoError(t, sink.Inject(fakeserver.Fault{Op: mailtest.Op, Times: 1, DropAfterSave: true}))
	_, err = s.Send(context.Background(), message(t, "a@b"))
	require.Error(t, err, "the reply was lost")
	require.False(t, errors.Is(err, mail.ErrUndeliverable))
	require.Len(t, sink.Received(), 1, "yet the server has it: the lost-reply case")
}

func TestAWrongLoginIsRetriedNotUndeliverable(t *testing.T) {
	t.Parallel()
	s, sink := setup(t, "wrong")
	_, err := s.Send(context.Background(), message(t, "a@b"))
	require.Error(t, err)
	require.False(t, errors.Is(err, mail.ErrUndeliverable), "the agency's to fix; the caller's address is fine")
	require.Empty(t, sink.Received())
}

func TestTheConfigIsChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []mail.Config{
		{Addr: "smtp.example.com", From: "a@example.com"},
		{Addr: "smtp.example.com:587", From: "not an address"},
		{Addr: "smtp.example.com:587", From: "a@example.com", TLS: "ssl3"},
	} {
		_, err := mail.New(c)
		require.Error(t, err, "%+v", c)
		require.True(t, strings.HasPrefix(err.Error(), "mail: "), err.Error())
	}
}
