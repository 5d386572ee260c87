package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/hubspot"
)

// Every bad setting is named at once; Microsoft's are checked only when a
// tenant asks for Microsoft 365, so a stray AZURE_CLIENT_ID is harmless.
func TestBadSettingsAreNamed(t *testing.T) {
	t.Parallel()
	ok := Mirrors{CalendarTimeout: time.Second, CRMTimeout: time.Second, TextsPerNumberDay: 1, TextsPerKeyHour: 1, TextsPerAgencyHour: 1}
	require.NoError(t, ok.Validate())

	stray := ok
	stray.Microsoft = Microsoft{ClientID: "app", ClientSecret: "s", CertificateFile: "app.pem"}
	require.NoError(t, stray.Validate())

	bad := ok
	bad.CalendarTimeout = 0
	bad.Microsoft = Microsoft{TenantID: "t"}
	require.EqualError(t, bad.Validate(), "calendar-timeout must be positive, got 0s\n"+
		"microsoft 365: microsoft-client-id is required with microsoft-tenant\n"+
		"set exactly one of microsoft-client-secret and microsoft-certificate")

	texts := ok
	texts.TextsPerKeyHour, texts.TextCountries = 0, "fr, XX"
	require.EqualError(t, texts.Validate(), "texts-per-key-hour must be 1 or more, got 0\n"+
		`text-countries: "XX" is not an ISO 3166 region with phone numbers`)
	texts.TextsPerKeyHour = 5
	require.Equal(t, []string{"FR"}, texts.TextLimits().Countries[:1], "read without case or spaces")

	crm := ok
	crm.CRM = "salesforce"
	require.EqualError(t, crm.Validate(), `crm must be http or hubspot, got "salesforce"`)
	crm.CRM, crm.HubSpot = "hubspot", HubSpot{URL: "http://127.0.0.1:1"}
	require.EqualError(t, crm.Validate(), "hubspot-per-ten-seconds must be positive, got 0")
	crm.HubSpot.PerTenSeconds = 100
	require.NoError(t, crm.Validate())
	crm.HubSpot.TokenFile = filepath.Join(t.TempDir(), "token")
	_, err := crm.Connect(t.Context(), false)
	require.ErrorContains(t, err, "hubspot token", "the file is missing")
	require.NoError(t, os.WriteFile(crm.HubSpot.TokenFile, []byte("pat-na1-x\n"), 0o600))
	crm.CRMBaseURL = "http://127.0.0.1:2"
	set, err := crm.Connect(t.Context(), false)
	require.NoError(t, err)
	r := set.CRM
	def, name := r.For("")
	require.IsType(t, &hubspot.Client{}, def)
	require.Equal(t, "hubspot", name)
	generic, _ := r.For("http")
	require.NotNil(t, generic, "a property may name the generic CRM beside the default")
	crm.CRMLanguage = "de"
	require.ErrorContains(t, crm.Validate(), "crm-language")

	both := ok
	both.Microsoft = Microsoft{TenantID: "t", ClientID: "app", ClientSecret: "s", CertificateFile: "app.pem"}
	require.ErrorContains(t, both.Validate(), "exactly one of microsoft-client-secret and microsoft-certificate")
}

// TestTheAPIsCalendarsOnlyRead: the catalogue the API reads through is
// built with clients that refuse to write, on every provider, the
// deployment's and an agency's own alike.
func TestTheAPIsCalendarsOnlyRead(t *testing.T) {
	t.Parallel()
	m := Mirrors{CalendarEndpoint: "http://127.0.0.1:1/calendar/v3/", CalendarNoAuth: true, CalendarTimeout: time.Second,
		Microsoft: Microsoft{TenantID: "t", ClientID: "app", ClientSecret: "s", GraphEndpoint: "http://127.0.0.1:1", LoginEndpoint: "http://127.0.0.1:1"}}
	cat, err := m.Catalog(t.Context(), nil, zap.NewNop())
	require.NoError(t, err)
	own, err := cat.Accounts.Build(t.Context(), accounts.Stored{accounts.Google: []byte(`{}`),
		accounts.Microsoft: []byte(`{"tenant_id": "t2", "client_id": "app2", "client_secret": "s2"}`)})
	require.NoError(t, err)
	for _, router := range []*calendars.Router{cat.Calendar, own.Calendar} {
		requireReadOnly(t, router)
	}
}

func requireReadOnly(t *testing.T, router *calendars.Router) {
	t.Helper()
	require.NotNil(t, router)
	for _, p := range []string{booking.ProviderGoogle, booking.ProviderMicrosoft} {
		_, err := router.Upsert(t.Context(), calendars.Booking{Calendar: calendars.Ref{Provider: p, ID: "agent@example.test"}, RequestKey: "k-1"})
		require.ErrorIs(t, err, calendars.ErrReadOnly, p)
		require.ErrorIs(t, router.Delete(t.Context(), calendars.Ref{Provider: p, ID: "agent@example.test"}, "k-1", "b-1"), calendars.ErrReadOnly, p)
	}
}
