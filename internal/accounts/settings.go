// Package accounts holds each agency's accounts at its mirrors: the
// credentials of its calendars (Google, Microsoft 365), its CRMs (the
// generic JSON API, HubSpot), its Twilio account and its SMTP server, as
// its admin key sets them in the vault (PUT /v1/mirrors/{kind}), and the
// rules they are checked by. Book gives each agency's clients, which the
// wiring builds (only it constructs adapters), to the worker's activities
// and the API's reads; the deployment's own accounts (its flags) serve
// the default agency alone.
package accounts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/mail"
)

// The kinds of account, one per provider (booking.AccountKinds).
const (
	Google    = "google"
	Microsoft = "microsoft"
	CRM       = "crm"
	HubSpot   = "hubspot"
	Twilio    = "twilio"
	SMTP      = "smtp"
)

// CRMName is the generic CRM's name where properties name their CRM
// (booking.Resource.CRM), as -crm names it; HubSpot's is its kind.
const CRMName = "http"

// Rules are the deployment's, which an account is checked by.
type Rules struct {
	// CalendarNoAuth: the deployment sends Google no credentials (the
	// dev stack's fake), so a Google account needs no key.
	CalendarNoAuth bool
	// Guard decides which addresses an account may name; nil refuses
	// every internal one.
	Guard *egress.Guard
}

func (r Rules) guard() *egress.Guard {
	if r.Guard == nil {
		return &egress.Guard{}
	}
	return r.Guard
}

// Stored is an agency's accounts' settings as the vault holds them
// (JSON), by kind.
type Stored map[string][]byte

// GoogleAccount is a Google Workspace service account with access to the
// agency's calendars.
type GoogleAccount struct {
	// ServiceAccount is the account's JSON key, as Google issues it.
	ServiceAccount json.RawMessage `json:"service_account,omitempty"`
	// Endpoint replaces the deployment's Calendar API root.
	Endpoint string `json:"endpoint,omitempty"`
}

// MicrosoftAccount is the agency's Entra ID app registration with the
// Calendars.ReadWrite application permission, proved by a client secret.
type MicrosoftAccount struct {
	TenantID      string `json:"tenant_id"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	GraphEndpoint string `json:"graph_endpoint,omitempty"`
	LoginEndpoint string `json:"login_endpoint,omitempty"`
}

// CRMAccount is the agency's generic CRM (internal/crm's JSON API).
type CRMAccount struct {
	BaseURL string `json:"base_url"`
	Token   string `json:"token,omitempty"`
}

// HubSpotAccount is the agency's HubSpot private app.
type HubSpotAccount struct {
	Token    string `json:"token"`
	Endpoint string `json:"endpoint,omitempty"`
}

// TwilioAccount is the agency's Twilio account and the number (or
// messaging service) its texts come from.
type TwilioAccount struct {
	AccountSid string `json:"account_sid"`
	AuthToken  string `json:"auth_token"`
	From       string `json:"from"`
	Endpoint   string `json:"endpoint,omitempty"`
}

// SMTPAccount is the agency's mail server and the address its e-mails
// come from.
type SMTPAccount struct {
	Addr     string `json:"addr"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	From     string `json:"from"`
	TLS      string `json:"tls,omitempty"`
}

// Read reads raw as kind's settings, refusing fields that kind has
// not: a misspelt field would otherwise be a credential silently unset.
func Read[T any](kind string, raw []byte) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("%s account: %w", kind, err)
	}
	return v, nil
}

// Check reads raw as an account of kind and refuses it unless it has
// every field it needs, none it has not, and only addresses the guard
// allows (an agency's endpoint is never the deployment's network). The
// wiring then builds its client as the worker will, so that what is
// stored builds.
func Check(ctx context.Context, d Rules, kind string, raw []byte) error {
	switch kind {
	case Google:
		a, err := Read[GoogleAccount](kind, raw)
		if err == nil {
			err = errors.Join(checkServiceAccount(a.ServiceAccount, d.CalendarNoAuth), checkURL(ctx, d, "endpoint", a.Endpoint, false))
		}
		return wrap(kind, err)
	case Microsoft:
		a, err := Read[MicrosoftAccount](kind, raw)
		if err == nil {
			err = errors.Join(required(map[string]string{"tenant_id": a.TenantID, "client_id": a.ClientID, "client_secret": a.ClientSecret}),
				checkURL(ctx, d, "graph_endpoint", a.GraphEndpoint, false), checkURL(ctx, d, "login_endpoint", a.LoginEndpoint, false))
		}
		return wrap(kind, err)
	case CRM:
		a, err := Read[CRMAccount](kind, raw)
		if err == nil {
			err = checkURL(ctx, d, "base_url", a.BaseURL, true)
		}
		return wrap(kind, err)
	case HubSpot:
		a, err := Read[HubSpotAccount](kind, raw)
		if err == nil {
			err = errors.Join(required(map[string]string{"token": a.Token}), checkURL(ctx, d, "endpoint", a.Endpoint, false))
		}
		return wrap(kind, err)
	case Twilio:
		a, err := Read[TwilioAccount](kind, raw)
		if err == nil {
			err = errors.Join(required(map[string]string{"account_sid": a.AccountSid, "auth_token": a.AuthToken, "from": a.From}),
				checkURL(ctx, d, "endpoint", a.Endpoint, false))
		}
		return wrap(kind, err)
	case SMTP:
		a, err := Read[SMTPAccount](kind, raw)
		if err == nil {
			err = errors.Join(required(map[string]string{"from": a.From}), checkAddr(ctx, d.guard(), a.Addr), checkTLS(d, a.TLS))
		}
		return wrap(kind, err)
	}
	return fmt.Errorf("no account kind %q; kinds are %s", kind, strings.Join(booking.AccountKinds, ", "))
}

func wrap(kind string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s account: %w", kind, err)
}

// required names the fields that are empty.
func required(fields map[string]string) error {
	var missing []string
	for name, v := range fields {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("%s required", strings.Join(missing, ", "))
}

// checkServiceAccount wants a service account's key: without one the
// client would fall back on the deployment's own credentials (Google's
// Application Default Credentials), which are not the agency's. A
// deployment that sends none (its fake) needs none.
func checkServiceAccount(key json.RawMessage, noAuth bool) error {
	if len(key) == 0 {
		if noAuth {
			return nil
		}
		return errors.New("service_account required")
	}
	var sa struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal(key, &sa); err != nil || sa.Type != "service_account" || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return errors.New("service_account must be a service account's JSON key (type service_account, client_email, private_key)")
	}
	return nil
}

// checkURL allows an empty optional URL (the deployment's), else an
// absolute http(s) URL whose host the guard allows.
func checkURL(ctx context.Context, d Rules, name, raw string, need bool) error {
	if raw == "" {
		if need {
			return fmt.Errorf("%s required", name)
		}
		return nil
	}
	if err := d.guard().CheckURL(ctx, raw); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkAddr wants host:port with a host the guard allows.
func checkAddr(ctx context.Context, g *egress.Guard, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("addr must be host:port, got %q", addr)
	}
	if err := g.CheckHost(ctx, host); err != nil {
		return fmt.Errorf("addr: %w", err)
	}
	return nil
}

// checkTLS refuses a password sent in the clear past this host: "none"
// is for a relay beside the service, which only a deployment that lets
// agencies name loopback (the dev stack) has.
func checkTLS(d Rules, mode string) error {
	if mail.TLS(mode) == mail.TLSNone && !d.guard().AllowLoopback {
		return errors.New("tls none is for a relay on the deployment's own host; use starttls or tls")
	}
	return nil
}
