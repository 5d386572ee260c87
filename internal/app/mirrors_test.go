package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every bad setting is named at once; Microsoft's are checked only when a
// tenant asks for Microsoft 365, so a stray AZURE_CLIENT_ID is harmless.
func TestBadSettingsAreNamed(t *testing.T) {
	t.Parallel()
	ok := Mirrors{CalendarTimeout: time.Second, CRMTimeout: time.Second}
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

	both := ok
	both.Microsoft = Microsoft{TenantID: "t", ClientID: "app", ClientSecret: "s", CertificateFile: "app.pem"}
	require.ErrorContains(t, both.Validate(), "exactly one of microsoft-client-secret and microsoft-certificate")
}
