package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/crm/crmtest"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// fakes are one agency's accounts at the mirrors' providers, each a fake
// server of its own: the default agency's are the deployment's (the
// processes' flags name them); the second agency's are its own, which the
// run sets in the vault (setAccounts), as its admin would.
type fakes struct {
	calendar *gcaltest.Calendar
	graph    *graphtest.Graph
	crm      *crmtest.CRM
	hubspot  *hubspottest.Account
	sms      *smstest.Twilio
	mail     *mailtest.Sink
	// hooks is the agency's webhook receiver, its backend's.
	hooks *hooks
	// the account's credentials at each
	graphApp                   graphtest.GraphApp
	hubspotToken               string
	twilioAccount, twilioToken string
	calendarURL, crmURL        string
	graphURL, smsURL           string
	hubspotURL, smtpAddr       string
	hooksURL                   string
	servers                    []*http.Server
}

// credentials name an agency's accounts at its fakes.
type credentials struct {
	graph                      graphtest.GraphApp
	hubspotToken               string
	twilioAccount, twilioToken string
}

// startFakes serves a new set of accounts on loopback.
func startFakes(cr credentials) (*fakes, error) {
	f := &fakes{calendar: gcaltest.NewCalendar(), graph: graphtest.NewGraph(cr.graph), crm: crmtest.NewCRM(crmToken),
		hubspot: hubspottest.New(cr.hubspotToken), sms: smstest.New(cr.twilioAccount, cr.twilioToken), mail: mailtest.New("", ""), hooks: &hooks{},
		graphApp: cr.graph, hubspotToken: cr.hubspotToken, twilioAccount: cr.twilioAccount, twilioToken: cr.twilioToken}
	for _, fake := range []struct {
		h   http.Handler
		url *string
	}{{f.calendar, &f.calendarURL}, {f.graph, &f.graphURL}, {f.crm, &f.crmURL}, {f.hubspot, &f.hubspotURL}, {f.sms, &f.smsURL}, {f.hooks, &f.hooksURL}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.stop()
			return nil, err
		}
		srv := httpserve.Server(fake.h)
		go func() { _ = srv.Serve(ln) }()
		f.servers = append(f.servers, srv)
		*fake.url = "http://" + ln.Addr().String()
	}
	var err error
	if f.smtpAddr, err = f.mail.Start("127.0.0.1:0"); err != nil {
		f.stop()
		return nil, err
	}
	return f, nil
}

// stop releases the fakes and closes their servers.
func (f *fakes) stop() {
	f.calendar.Release()
	f.crm.Release()
	f.hubspot.Release()
	f.sms.Release()
	_ = f.mail.Close()
	for _, s := range f.servers {
		_ = s.Close()
	}
}

// inject makes every fake misbehave at rate, seeded from seed.
func (f *fakes) inject(rate float64, kinds, messages []fakeserver.Fault, seed uint64) error {
	return errors.Join(f.calendar.InjectRandom(rate, kinds, seed), f.crm.InjectRandom(rate, kinds, seed+1),
		f.graph.InjectRandom(rate, kinds, seed+2), f.sms.InjectRandom(rate, messages, seed+3), f.mail.InjectRandom(rate, messages, seed+4),
		f.hubspot.InjectRandom(rate, kinds, seed+5))
}

// setAccounts stores the accounts of the agency ctx acts for at f: its
// calendars (Google's and Microsoft's), HubSpot as its only CRM, Twilio
// and its SMTP server.
func (f *fakes) setAccounts(ctx context.Context, st *store.Store) error {
	for kind, settings := range map[string]any{
		accounts.Google: map[string]string{"endpoint": f.calendarURL + "/calendar/v3/"},
		accounts.Microsoft: map[string]string{"tenant_id": f.graphApp.TenantID, "client_id": f.graphApp.ClientID,
			"client_secret": f.graphApp.ClientSecret, "graph_endpoint": f.graphURL + "/v1.0", "login_endpoint": f.graphURL},
		accounts.HubSpot: map[string]string{"token": f.hubspotToken, "endpoint": f.hubspotURL},
		accounts.Twilio: map[string]string{"account_sid": f.twilioAccount, "auth_token": f.twilioToken, "from": "+33757000001",
			"endpoint": f.smsURL},
		accounts.SMTP: map[string]string{"addr": f.smtpAddr, "from": "visites@lyon.chaos.test", "tls": "none"},
	} {
		raw, err := json.Marshal(settings)
		if err != nil {
			return err
		}
		if err := st.PutMirrorAccount(ctx, kind, raw); err != nil {
			return fmt.Errorf("set %s account: %w", kind, err)
		}
	}
	return nil
}
