package app

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

// Microsoft is the app registration bookingsaga uses for Microsoft 365
// calendars: client credentials with the Calendars.ReadWrite application
// permission (README, "Microsoft 365").
type Microsoft struct {
	TenantID, ClientID string
	// ClientSecret or CertificateFile (PEM: certificate and key), one.
	ClientSecret, CertificateFile string
	// GraphEndpoint and LoginEndpoint override Microsoft's public cloud,
	// for a national cloud or the local fake.
	GraphEndpoint, LoginEndpoint string
}

func (m *Microsoft) register(fs *flag.FlagSet) {
	fs.StringVar(&m.TenantID, "microsoft-tenant", m.TenantID, "Entra ID tenant id for Microsoft 365 calendars; empty means none (env AZURE_TENANT_ID)")
	fs.StringVar(&m.ClientID, "microsoft-client-id", m.ClientID, "the app registration's client id (env AZURE_CLIENT_ID)")
	fs.StringVar(&m.ClientSecret, "microsoft-client-secret", m.ClientSecret, "the app's client secret; prefer the env AZURE_CLIENT_SECRET, which ps does not show")
	fs.StringVar(&m.CertificateFile, "microsoft-certificate", m.CertificateFile, "PEM file with the app's certificate and private key, instead of a secret (env AZURE_CLIENT_CERTIFICATE_PATH)")
	fs.StringVar(&m.GraphEndpoint, "graph-endpoint", m.GraphEndpoint, "Microsoft Graph root; empty is "+msgraph.DefaultEndpoint+" (env GRAPH_ENDPOINT)")
	fs.StringVar(&m.LoginEndpoint, "microsoft-login", m.LoginEndpoint, "Entra ID authority host; empty is "+msgraph.DefaultLogin+" (env AZURE_AUTHORITY_HOST)")
}

func (m Microsoft) configured() bool { return m.TenantID != "" }

// validate checks the settings only when a tenant is set: without one the
// rest is ignored, so a stray AZURE_CLIENT_ID from another tool is harmless.
func (m Microsoft) validate() error {
	if !m.configured() {
		return nil
	}
	var errs []error
	if m.ClientID == "" {
		errs = append(errs, errors.New("microsoft-client-id is required with microsoft-tenant"))
	}
	if (m.ClientSecret == "") == (m.CertificateFile == "") {
		errs = append(errs, errors.New("set exactly one of microsoft-client-secret and microsoft-certificate"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("microsoft 365: %w", err)
	}
	return nil
}

func (m Microsoft) graph(timeout time.Duration) msgraph.Config {
	return msgraph.Config{Endpoint: m.GraphEndpoint, Login: m.LoginEndpoint, TenantID: m.TenantID, ClientID: m.ClientID,
		ClientSecret: m.ClientSecret, CertificateFile: m.CertificateFile, CallTimeout: timeout, Retry: retry.Default()}
}
