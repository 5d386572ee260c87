package accounts_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/egress"
)

func rules(loopback bool) accounts.Rules {
	return accounts.Rules{Guard: &egress.Guard{AllowLoopback: loopback}}
}

const serviceAccount = `{"type": "service_account", "client_email": "sync@agency.iam.gserviceaccount.com",
	"private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n", "token_uri": "https://oauth2.googleapis.com/token"}`

// Each kind's account is refused, with the reason, when a field is
// missing, unknown or out of shape, or when an address it names is the
// deployment's own network; the same accounts in shape pass.
func TestAnAccountOutOfShapeIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind, settings, want string
		loopback             bool
	}{
		{kind: accounts.Twilio, settings: `{"account_sid": "AC1", "auth_token": "t0k", "from": "+33700000000", "endpont": "x"}`, want: `unknown field "endpont"`},
		{kind: accounts.Twilio, settings: `{"account_sid": "AC1"}`, want: "auth_token, from required"},
		{kind: accounts.HubSpot, settings: `{"token": "pat", "endpoint": "http://127.0.0.1:9/"}`, want: "loopback"},
		{kind: accounts.HubSpot, settings: `{"token": "pat", "endpoint": "http://169.254.169.254/"}`, loopback: true, want: "169.254.169.254"},
		{kind: accounts.CRM, settings: `{"token": "t"}`, want: "base_url required"},
		{kind: accounts.CRM, settings: `{"base_url": "http://10.1.2.3/crm"}`, want: "private"},
		{kind: accounts.Google, settings: `{}`, want: "service_account required"},
		{kind: accounts.Google, settings: `{"service_account": {"type": "authorized_user"}}`, want: "service account's JSON key"},
		{kind: accounts.Microsoft, settings: `{"tenant_id": "t", "client_id": "c"}`, want: "client_secret required"},
		{kind: accounts.SMTP, settings: `{"addr": "mail.example.com", "from": "a@example.com"}`, want: "host:port"},
		{kind: accounts.SMTP, settings: `{"addr": "127.0.0.1:25", "from": "a@example.com", "tls": "none"}`, want: "loopback"},
		{kind: accounts.SMTP, settings: `{"addr": "93.184.215.14:587", "from": "a@example.com", "tls": "none"}`, want: "tls none"},
		{kind: "zoom", settings: `{}`, want: `no account kind "zoom"`},
		{kind: accounts.HubSpot, settings: `[]`, want: "hubspot account"},
	} {
		err := accounts.Check(t.Context(), rules(c.loopback), c.kind, []byte(c.settings))
		require.ErrorContains(t, err, c.want, "%s %s", c.kind, c.settings)
	}
	for kind, settings := range map[string]string{
		accounts.Twilio:    `{"account_sid": "AC1", "auth_token": "t0k", "from": "+33700000000"}`,
		accounts.HubSpot:   `{"token": "pat-eu1-x"}`,
		accounts.CRM:       `{"base_url": "https://93.184.215.15/crm", "token": "t"}`,
		accounts.Google:    `{"service_account": ` + serviceAccount + `}`,
		accounts.Microsoft: `{"tenant_id": "t", "client_id": "c", "client_secret": "s"}`,
		accounts.SMTP:      `{"addr": "93.184.215.14:587", "from": "visites@agence.example", "username": "u", "password": "p"}`,
	} {
		require.NoError(t, accounts.Check(t.Context(), rules(false), kind, []byte(settings)), kind)
	}
	require.NoError(t, accounts.Check(t.Context(), accounts.Rules{CalendarNoAuth: true}, accounts.Google, []byte(`{}`)),
		"a deployment that sends Google nothing (its fake) needs no key")
}
