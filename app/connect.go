package app

import (
	"cmp"
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/hubspot"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// clients are one set of accounts' client settings: the deployment's,
// from its flags, or an agency's, from the vault. A nil one is an
// account not kept.
type clients struct {
	google    *gcal.Config
	microsoft *msgraph.Config
	// http and hubspot are the CRMs; crmDefault names the one of the
	// properties that name none.
	http       *crm.Config
	hubspot    *hubspot.Config
	crmDefault string
	sms        *sms.Config
	mail       *mail.Config
	// readOnly builds calendars that only read: the API's Google client
	// then asks for read scopes (Graph grants permissions to the app
	// registration, so the API's comes from one of its own with
	// Calendars.Read), and its router refuses writes.
	readOnly bool
}

// connect builds the clients: the one place the mirrors' adapters are
// constructed.
func (cl clients) connect(ctx context.Context) (accounts.Set, error) {
	var set accounts.Set
	providers := map[string]calendars.Provider{}
	if cl.google != nil {
		g, err := gcal.New(ctx, *cl.google)
		if err != nil {
			return set, err
		}
		providers[booking.ProviderGoogle] = g
	}
	if cl.microsoft != nil {
		m, err := msgraph.New(*cl.microsoft)
		if err != nil {
			return set, err
		}
		providers[booking.ProviderMicrosoft] = m
	}
	if len(providers) > 0 {
		if set.Calendar = calendars.NewRouter(providers); cl.readOnly {
			set.Calendar = set.Calendar.ReadOnly()
		}
	}
	byName := map[string]crm.CRM{}
	if cl.http != nil {
		h, err := crm.NewHTTP(*cl.http)
		if err != nil {
			return set, err
		}
		byName[accounts.CRMName] = h
	}
	if cl.hubspot != nil {
		h, err := hubspot.New(*cl.hubspot)
		if err != nil {
			return set, err
		}
		byName[accounts.HubSpot] = h
	}
	set.CRM = crm.NewRouter(cmp.Or(cl.crmDefault, accounts.CRMName), byName)
	var err error
	if cl.sms != nil {
		if set.SMS, err = sms.New(*cl.sms); err != nil {
			return set, err
		}
	}
	if cl.mail != nil {
		set.Mail, err = mail.New(*cl.mail)
	}
	return set, err
}

// Connect connects the deployment's own accounts, those of its flags,
// which serve the default agency; readOnly for the API's.
func (c Mirrors) Connect(ctx context.Context, readOnly bool) (accounts.Set, error) {
	cl, err := c.deployment(readOnly)
	if err != nil {
		return accounts.Set{}, err
	}
	return cl.connect(ctx)
}

// deployment are the flags' accounts. Google's is there when any of its
// settings, or its own credentials variable, is; HubSpot's where -crm
// names it or it has a token.
func (c Mirrors) deployment(readOnly bool) (clients, error) {
	cl := clients{crmDefault: cmp.Or(c.CRM, accounts.CRMName), readOnly: readOnly}
	if c.CalendarConfigured() {
		cl.google = &gcal.Config{Endpoint: c.CalendarEndpoint, CredentialsFile: c.CalendarCredentials,
			NoAuth: c.CalendarNoAuth, CallTimeout: c.CalendarTimeout, Retry: retry.Default(), ReadOnly: readOnly}
	}
	if c.Microsoft.configured() {
		g := c.Microsoft.graph(c.CalendarTimeout)
		cl.microsoft = &g
	}
	if c.CRMBaseURL != "" {
		cl.http = &crm.Config{BaseURL: c.CRMBaseURL, Token: c.CRMToken, Timeout: c.CRMTimeout, Retry: retry.Default()}
	}
	var err error
	if c.CRM == accounts.HubSpot || c.HubSpot.configured() {
		if cl.hubspot, err = c.HubSpot.config(c.CRMTimeout); err != nil {
			return cl, err
		}
	}
	if c.TwilioAccountSid != "" {
		token, err := secretOrFile(c.TwilioAuthToken, c.TwilioAuthTokenFile)
		if err != nil {
			return cl, fmt.Errorf("twilio auth token: %w", err)
		}
		cl.sms = &sms.Config{AccountSid: c.TwilioAccountSid, AuthToken: token, From: c.SMSFrom, Endpoint: c.TwilioEndpoint, Timeout: c.CRMTimeout}
	}
	cl.mail, err = c.SMTP.config(c.CRMTimeout)
	return cl, err
}

// Accounts is each agency's own accounts over the vault v, built with the
// deployment's APIs' roots (for an account that names none) and timeouts;
// readOnly for the API's.
func (c Mirrors) Accounts(v accounts.Vault, readOnly bool) *accounts.Book {
	return &accounts.Book{Vault: v, Build: func(ctx context.Context, stored accounts.Stored) (accounts.Set, error) {
		cl, err := c.agency(stored, readOnly)
		if err != nil {
			return accounts.Set{}, err
		}
		return cl.connect(ctx)
	}}
}

// CheckAccount refuses an agency's account of kind unless its fields
// pass (accounts.Check) and its client builds as the worker builds it.
func (c Mirrors) CheckAccount(ctx context.Context, kind string, raw []byte) error {
	if err := accounts.Check(ctx, c.accountRules(), kind, raw); err != nil {
		return err
	}
	cl, err := c.agency(accounts.Stored{kind: raw}, false)
	if err == nil {
		_, err = cl.connect(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s account: %w", kind, err)
	}
	return nil
}

func (c Mirrors) accountRules() accounts.Rules {
	return accounts.Rules{CalendarNoAuth: c.CalendarNoAuth, Guard: c.Egress()}
}

// Catalog builds the catalogue's reads over st, with calendar clients
// that only read: the deployment's accounts, and each agency's own.
func (c Mirrors) Catalog(ctx context.Context, st *store.Store, log *zap.Logger) (*catalog.Catalog, error) {
	set, err := c.Connect(ctx, true)
	if err != nil {
		return nil, err
	}
	return &catalog.Catalog{Store: st, Log: log, Calendar: set.Calendar, CRM: set.CRM, Accounts: c.Accounts(st, true)}, nil
}

// TextsSigned checks the X-Twilio-Signature of a reply to the texts of
// the agency ctx acts for, under its Twilio account's auth token: its
// own (book), or the deployment's for the default agency; false when it
// keeps none.
func (c Mirrors) TextsSigned(book *accounts.Book) func(ctx context.Context, url string, params map[string]string, signature string) (bool, error) {
	var own accounts.Set
	if cl, err := c.deployment(true); err == nil && cl.sms != nil { // validated at start: an error is no account
		own.SMS, _ = sms.New(*cl.sms)
	}
	return func(ctx context.Context, url string, params map[string]string, signature string) (bool, error) {
		set, err := book.For(ctx, own)
		if err != nil || set.SMS == nil {
			return false, err
		}
		return set.SMS.Signed(url, params, signature), nil
	}
}

// AccountsWriter writes an agency's accounts to the vault for the API,
// and has book, this process's, read them again at once.
func AccountsWriter(st *store.Store, book *accounts.Book) api.MirrorAccounts {
	return accountsWriter{st, book}
}

type accountsWriter struct {
	*store.Store
	book *accounts.Book
}

func (w accountsWriter) PutMirrorAccount(ctx context.Context, kind string, settings []byte) error {
	defer w.book.Forget(ctx)
	return w.Store.PutMirrorAccount(ctx, kind, settings)
}

func (w accountsWriter) DeleteMirrorAccount(ctx context.Context, kind string) error {
	defer w.book.Forget(ctx)
	return w.Store.DeleteMirrorAccount(ctx, kind)
}
