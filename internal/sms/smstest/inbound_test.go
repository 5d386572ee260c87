package smstest_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	twilio "github.com/twilio/twilio-go/client"

	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
)

// The fake signs as Twilio's security page documents: its signature of
// twilio-go's own test request is the one twilio-go's tests expect, and
// twilio-go's validator takes what it signs, and nothing else.
func TestTheFakeSignsAsTwilioDoes(t *testing.T) {
	t.Parallel()
	const token, calledURL = "12345", "https://mycompany.com/myapp.php?foo=1&bar=2"
	form := url.Values{"Digits": {"1234"}, "CallSid": {"CA1234567890ABCDE"}, "To": {"+18005551212"}, "Caller": {"+14158675309"},
		"From": {"+14158675309"}, "ReasonConferenceEnded": {"test"}, "Reason": {"Participant"}}
	sig := smstest.Sign(token, calledURL, form)
	require.Equal(t, "vOEb5UThFn24KEfnOFLQY2AE5FY=", sig, "twilio-go's test vector")

	params := map[string]string{}
	for k := range form {
		params[k] = form.Get(k)
	}
	rv := twilio.NewRequestValidator(token)
	require.True(t, rv.Validate(calledURL, params, sig))
	require.False(t, rv.Validate("https://mycompany.com/other.php?foo=1&bar=2", params, sig), "another URL")
	params["Digits"] = "4321"
	require.False(t, rv.Validate(calledURL, params, sig), "another body")
	other := twilio.NewRequestValidator("54321")
	params["Digits"] = "1234"
	require.False(t, other.Validate(calledURL, params, sig), "another token")
}
