package sms_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
)

const (
	account = "AC0123456789abcdef0123456789abcdef"
	token   = "0123456789abcdef0123456789abcdef"
	from    = "+33700000000"
)

func setup(t *testing.T, cfg sms.Config) (*sms.Sender, *smstest.Twilio) {
	t.Helper()
	fake := smstest.New(account, token)
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { fake.Release(); srv.Close() })
	if cfg.AccountSid == "" {
		cfg.AccountSid, cfg.AuthToken, cfg.From = account, token, from
	}
	cfg.Endpoint = srv.URL
	s, err := sms.New(cfg)
	require.NoError(t, err)
	return s, fake
}

func TestAMessageReachesTwilioAsTwilioGoSendsIt(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, sms.Config{})
	sid, err := s.Send("+33612345678", "Your viewing is confirmed.")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(sid, "SM") && len(sid) == 34, sid)
	sent := fake.Sent()
	require.Len(t, sent, 1)
	require.Equal(t, smstest.Message{Sid: sid, To: "+33612345678", From: from, Body: "Your viewing is confirmed.", At: sent[0].At}, sent[0])
}

func TestARefusedNumberIsUndeliverableAndKeepsTheNumberOutOfTheError(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, sms.Config{})
	fake.Stop("+33611111111")
	for _, to := range []string{"0612345678", "+33611111111"} {
		_, err := s.Send(to, "hello")
		require.ErrorIs(t, err, sms.ErrUndeliverable, to)
		require.NotContains(t, err.Error(), strings.TrimPrefix(to, "+"))
	}
	require.Empty(t, fake.Sent())
}

func TestTwiliosFaultsAreErrorsToRetry(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, sms.Config{})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, Status: http.StatusTooManyRequests}))
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, Status: http.StatusServiceUnavailable}))
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, DropAfterSave: true}))
	for _, want := range []string{"twilio 20429 (http 429)", "twilio 20500 (http 503)", "send sms"} {
		_, err := s.Send("+33612345678", "hello")
		require.ErrorContains(t, err, want)
		require.False(t, errors.Is(err, sms.ErrUndeliverable))
	}
	require.Len(t, fake.Sent(), 1, "the reply lost after the send: Twilio has it, and has no idempotency key to say so")
	_, err := s.Send("+33612345678", "hello")
	require.NoError(t, err)
}

func TestWrongCredentialsAndBadConfigAreNamed(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, sms.Config{AccountSid: account, AuthToken: "wrong0token", From: from})
	_, err := s.Send("+33612345678", "hello")
	require.ErrorContains(t, err, "twilio 20003 (http 401)")
	_, err = sms.New(sms.Config{AccountSid: account, AuthToken: token})
	require.ErrorContains(t, err, "from number")
	_, err = sms.New(sms.Config{AccountSid: account, AuthToken: "with-dash", From: from})
	require.ErrorContains(t, err, "letters and digits")
	_, err = sms.New(sms.Config{AccountSid: account, AuthToken: token, From: from, Endpoint: "not a url"})
	require.ErrorContains(t, err, "not a URL")
}

// Find reads Twilio's list the way twilio-go pages it, and finds a text
// only by its number and words.
func TestFindLooksTheTextUp(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, sms.Config{})
	since := time.Now()
	sid, err := s.Send("+33612345678", "Your viewing is confirmed.")
	require.NoError(t, err)
	_, err = s.Send("+33612345679", "Your viewing is moved.")
	require.NoError(t, err)
	got, found, err := s.Find("+33612345678", "Your viewing is confirmed.", since)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, sid, got)
	for _, miss := range [][2]string{{"+33612345678", "Your viewing is moved."}, {"+33612345679", "Your viewing is confirmed."}} {
		_, found, err = s.Find(miss[0], miss[1], since)
		require.NoError(t, err)
		require.False(t, found, "%v", miss)
	}
	_, found, err = s.Find("+33612345678", "Your viewing is confirmed.", since.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, found, "an older text of the same words is not this one")
}
