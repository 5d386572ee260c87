package app

import (
	"cmp"

	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/hubspot"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/sms"
)

// agency are an agency's own accounts, as the vault holds them: nothing
// of the deployment's credentials, only its APIs' roots where an account
// names none, and its timeouts. Its properties that name no CRM go to its
// generic CRM when it keeps one, else to HubSpot.
func (c Mirrors) agency(stored accounts.Stored, readOnly bool) (clients, error) {
	cl := clients{crmDefault: accounts.CRMName, readOnly: readOnly}
	if _, ok := stored[accounts.CRM]; !ok {
		cl.crmDefault = accounts.HubSpot
	}
	for kind, raw := range stored {
		if err := c.agencyAccount(&cl, kind, raw); err != nil {
			return cl, err
		}
	}
	return cl, nil
}

// agencyAccount reads raw, the account of kind, into cl.
func (c Mirrors) agencyAccount(cl *clients, kind string, raw []byte) error {
	var err error
	switch kind {
	case accounts.Google:
		var a accounts.GoogleAccount
		if a, err = accounts.Read[accounts.GoogleAccount](kind, raw); err == nil {
			cl.google = &gcal.Config{Endpoint: cmp.Or(a.Endpoint, c.CalendarEndpoint), CredentialsJSON: a.ServiceAccount,
				NoAuth: c.CalendarNoAuth, CallTimeout: c.CalendarTimeout, Retry: retry.Default(), ReadOnly: cl.readOnly}
		}
	case accounts.Microsoft:
		var a accounts.MicrosoftAccount
		if a, err = accounts.Read[accounts.MicrosoftAccount](kind, raw); err == nil {
			cl.microsoft = &msgraph.Config{Endpoint: cmp.Or(a.GraphEndpoint, c.Microsoft.GraphEndpoint),
				Login: cmp.Or(a.LoginEndpoint, c.Microsoft.LoginEndpoint), TenantID: a.TenantID, ClientID: a.ClientID,
				ClientSecret: a.ClientSecret, CallTimeout: c.CalendarTimeout, Retry: retry.Default()}
		}
	case accounts.CRM:
		var a accounts.CRMAccount
		if a, err = accounts.Read[accounts.CRMAccount](kind, raw); err == nil {
			cl.http = &crm.Config{BaseURL: a.BaseURL, Token: a.Token, Timeout: c.CRMTimeout, Retry: retry.Default()}
		}
	case accounts.HubSpot:
		var a accounts.HubSpotAccount
		if a, err = accounts.Read[accounts.HubSpotAccount](kind, raw); err == nil {
			cl.hubspot = &hubspot.Config{BaseURL: cmp.Or(a.Endpoint, c.HubSpot.URL, hubspot.DefaultBaseURL), Token: a.Token,
				Timeout: c.CRMTimeout, Retry: retry.Default(), PerTenSeconds: c.HubSpot.PerTenSeconds}
		}
	case accounts.Twilio:
		var a accounts.TwilioAccount
		if a, err = accounts.Read[accounts.TwilioAccount](kind, raw); err == nil {
			cl.sms = &sms.Config{AccountSid: a.AccountSid, AuthToken: a.AuthToken, From: a.From,
				Endpoint: cmp.Or(a.Endpoint, c.TwilioEndpoint), Timeout: c.CRMTimeout}
		}
	case accounts.SMTP:
		var a accounts.SMTPAccount
		if a, err = accounts.Read[accounts.SMTPAccount](kind, raw); err == nil {
			cl.mail = &mail.Config{Addr: a.Addr, Username: a.Username, Password: a.Password, From: a.From,
				TLS: mail.TLS(a.TLS), Timeout: c.CRMTimeout}
		}
	}
	return err
}
