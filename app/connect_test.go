package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// deployment is a deployment's settings with a Twilio account and a
// generic CRM of its own.
func deployment() Mirrors {
	return Mirrors{CalendarTimeout: time.Second, CRMTimeout: time.Second, HubSpot: HubSpot{PerTenSeconds: 100},
		CRMBaseURL: "https://93.184.215.16/", TwilioAccountSid: "ACflags", TwilioAuthToken: "t0k", SMSFrom: "+33700000000"}
}

// An agency's account is refused when its fields are (accounts.Check),
// and when its client would not build as the worker builds it.
func TestAnAgencysAccountMustBuild(t *testing.T) {
	t.Parallel()
	m := deployment()
	require.NoError(t, m.CheckAccount(t.Context(), accounts.Twilio, []byte(`{"account_sid": "AC1", "auth_token": "t0k", "from": "+33700000000"}`)))
	require.ErrorContains(t, m.CheckAccount(t.Context(), accounts.Twilio, []byte(`{"account_sid": "AC-1", "auth_token": "t0k", "from": "+33700000000"}`)),
		"letters and digits", "twilio-go's own rule")
	require.ErrorContains(t, m.CheckAccount(t.Context(), accounts.Twilio, []byte(`{"account_sid": "AC1"}`)), "auth_token, from required")
	require.ErrorContains(t, m.CheckAccount(t.Context(), accounts.SMTP, []byte(`{"addr": "93.184.215.14:587", "from": "not an address"}`)),
		"smtp account")
}

// An agency's properties that name no CRM go to its generic CRM when it
// keeps one, else to its HubSpot.
func TestAnAgencysDefaultCRMIsItsGenericOneElseHubSpot(t *testing.T) {
	t.Parallel()
	book := deployment().Accounts(nil, false)
	hub := []byte(`{"token": "pat-eu1-x"}`)
	only, err := book.Build(t.Context(), accounts.Stored{accounts.HubSpot: hub})
	require.NoError(t, err)
	_, name := only.CRM.For("")
	require.Equal(t, accounts.HubSpot, name)
	require.Nil(t, only.Calendar, "no calendar account, no calendar")
	require.Nil(t, only.SMS, "and none of the deployment's accounts")
	both, err := book.Build(t.Context(), accounts.Stored{accounts.HubSpot: hub, accounts.CRM: []byte(`{"base_url": "https://93.184.215.15/crm"}`)})
	require.NoError(t, err)
	_, name = both.CRM.For("")
	require.Equal(t, accounts.CRMName, name)
	kept, _ := both.CRM.For(accounts.HubSpot)
	require.NotNil(t, kept, "a property may still name HubSpot")
}

// The default agency keeps the deployment's accounts for each mirror it
// set none of, and its own for the others; another agency gets its own
// alone, never the deployment's, under the store's row-level security.
func TestTheDeploymentsAccountsServeTheDefaultAgencyAlone(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	st := store.New(pool, store.Config{})
	m := deployment()
	own, err := m.Connect(t.Context(), false)
	require.NoError(t, err)
	require.NotNil(t, own.SMS)
	require.NotNil(t, own.CRM)

	set, err := m.Accounts(st, false).For(t.Context(), own)
	require.NoError(t, err)
	require.Equal(t, own, set, "nothing stored: the deployment's")

	var lyon agency.Agency
	require.NoError(t, pool.QueryRow(t.Context(), "INSERT INTO agency (agency_id, name) VALUES ('lyon', 'Lyon') RETURNING agency_no, agency_id").
		Scan(&lyon.No, &lyon.ID))
	lyonCtx := agency.With(t.Context(), lyon)
	set, err = m.Accounts(st, false).For(lyonCtx, own)
	require.NoError(t, err)
	require.Equal(t, accounts.Set{}, set, "another agency gets none of the deployment's")

	require.NoError(t, st.PutMirrorAccount(lyonCtx, accounts.Twilio, []byte(`{"account_sid": "AClyon", "auth_token": "t0k", "from": "+33700000001"}`)))
	require.NoError(t, st.PutMirrorAccount(t.Context(), accounts.HubSpot, []byte(`{"token": "pat-eu1-default"}`)))
	book := m.Accounts(st, false)
	set, err = book.For(t.Context(), own)
	require.NoError(t, err)
	require.Same(t, own.SMS, set.SMS, "the default agency's texts: still the deployment's account")
	require.NotSame(t, own.CRM, set.CRM, "its CRM: the account it set")
	_, name := set.CRM.For("")
	require.Equal(t, accounts.HubSpot, name)
	set, err = book.For(lyonCtx, own)
	require.NoError(t, err)
	require.NotNil(t, set.SMS)
	require.NotSame(t, own.SMS, set.SMS, "lyon's texts go through its own account")
	require.Nil(t, set.CRM, "and lyon sees no CRM of the default agency's")
}
