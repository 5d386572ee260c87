package systemtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// ownAccounts are an agency's own fake calendar, HubSpot and Twilio
// accounts, each at a server of its own.
type ownAccounts struct {
	calendar                        *gcaltest.Calendar
	hubspot                         *hubspottest.Account
	twilio                          *smstest.Twilio
	calendarURL, hubspotURL, smsURL string
}

func newOwnAccounts(t *testing.T) ownAccounts {
	t.Helper()
	o := ownAccounts{calendar: gcaltest.NewCalendar(), hubspot: hubspottest.New("pat-eu1-lyon"), twilio: smstest.New("AClyon", "lyontoken")}
	for url, h := range map[*string]http.Handler{&o.calendarURL: o.calendar, &o.hubspotURL: o.hubspot, &o.smsURL: o.twilio} {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		*url = srv.URL
	}
	t.Cleanup(func() { o.calendar.Release(); o.hubspot.Release(); o.twilio.Release() })
	return o
}

// bookTexted books key at hour through the API with key by, its caller
// agreeing to texts.
func (f *fixture) bookTexted(url, by, key string, hour int) {
	f.t.Helper()
	body := bookingBody(key, slot(f.t, hour))
	body.Contact = &edge.Contact{Name: "Camille", Phone: "+33612345678", Notify: "sms"}
	var r receipt.Receipt
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r, "Authorization", "Bearer "+by))
	require.Equal(f.t, receipt.StatusConfirmed, r.Status)
}

// textedBooking is bookTexted, once the confirmation's text ended.
func (f *fixture) textedBooking(ctx context.Context, url, by, key string, hour int) booking.MessageRecord {
	f.t.Helper()
	f.bookTexted(url, by, key, hour)
	var m booking.MessageRecord
	f.eventually(func() bool {
		msgs, err := f.acts.Store.Messages(ctx, key)
		require.NoError(f.t, err)
		if len(msgs) == 1 {
			m = msgs[0]
		}
		return m.Status != "" && m.Status != booking.MessageDue
	}, "the confirmation's text ended")
	return m
}

// An agency's admin sets its mirrors' accounts, never reading them back;
// an account out of shape, or naming an address inside the deployment,
// is refused with nothing written. Its booking's event, meeting and text
// then go through its accounts alone, and the default agency's through
// the deployment's: neither account holds the other agency's.
func TestAnAgencysMirrorsGoThroughItsOwnAccountsAlone(t *testing.T) {
	t.Parallel()
	s, deployment := fakeTwilio(t)
	f := sendingWorker(t, func(f *fixture) { f.acts.SMS = s })
	url, secret, as := f.agencyAPI(app.EdgeConfig{})
	lyon := agency.With(f.ctx, agency.Agency{ID: "lyon", No: f.agencyNo("lyon")})
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	require.NoError(t, activities.EnsureMessages(lyon, f.client, f.queue))
	t.Cleanup(func() {
		_ = f.client.TerminateWorkflow(f.ctx, agency.Scoped(lyon, booking.MessagesIDPrefix+f.queue), "", "the test is over")
	})
	own := newOwnAccounts(t)

	var e edge.Error
	for kind, bad := range map[string]map[string]any{
		accounts.Twilio:  {"account_sid": "AClyon", "auth_token": "lyontoken", "from": "+33700000001", "endpont": own.smsURL},
		accounts.HubSpot: {"endpoint": own.hubspotURL},
		accounts.Google:  {"endpoint": "http://169.254.169.254/calendar/v3/"},
		accounts.CRM:     {"base_url": "http://10.0.0.7/crm"},
	} {
		require.Equal(t, http.StatusBadRequest, f.call("PUT", url+"/v1/mirrors/"+kind, bad, &e, as("lyon")...), kind)
		require.Equal(t, "invalid_request", e.Code, kind)
	}
	require.Equal(t, http.StatusNotFound, f.call("PUT", url+"/v1/mirrors/zoom", map[string]string{}, &e, as("lyon")...))
	var set api.MirrorAccountList
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/mirrors", nil, &set, as("lyon")...))
	require.Equal(t, []string{accounts.CRM, accounts.Google}, set.Set, "nothing refused was written")

	for kind, settings := range map[string]map[string]any{
		accounts.Google:  {"endpoint": own.calendarURL + "/calendar/v3/"},
		accounts.HubSpot: {"token": "pat-eu1-lyon", "endpoint": own.hubspotURL},
		accounts.Twilio:  {"account_sid": "AClyon", "auth_token": "lyontoken", "from": "+33700000001", "endpoint": own.smsURL},
	} {
		require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/mirrors/"+kind, settings, &set, as("lyon")...), kind)
	}
	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/mirrors/crm", nil, &set, as("lyon")...))
	require.Equal(t, []string{accounts.Google, accounts.HubSpot, accounts.Twilio}, set.Set, "which are set, never what")
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/mirrors", nil, &set, as("paris")...))
	require.Empty(t, set.Set, "the default agency sees none of lyon's")

	f.eventually(func() bool {
		set, err := f.acts.Accounts.For(lyon, accounts.Set{})
		require.NoError(t, err)
		return set.SMS != nil && set.CRM != nil
	}, "the worker reads lyon's accounts")
	lyonKey, parisKey := uuid.NewString(), uuid.NewString()
	require.Equal(t, booking.MessageSent, f.textedBooking(lyon, url, secret["lyon"], lyonKey, 10).Status)
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, url, secret["paris"], parisKey, 10).Status)
	f.eventually(func() bool { return f.synced(parisKey) && len(own.hubspot.Meetings()) == 1 }, "both bookings mirrored")

	require.Len(t, own.twilio.Sent(), 1, "lyon's text went through lyon's account")
	require.Equal(t, "+33700000001", own.twilio.Sent()[0].From)
	require.Len(t, deployment.Sent(), 1, "the deployment's account sent the default agency's text alone")
	lyonEvent, parisEvent := gcal.EventID("agency:lyon:"+lyonKey), gcal.EventID(parisKey)
	require.Equal(t, []string{lyonEvent}, liveIDs(own.calendar.Events(agentCal)), "lyon's event in lyon's calendar account alone")
	require.Equal(t, []string{parisEvent}, liveIDs(f.calendar.Events(agentCal)), "the deployment's calendar holds the default agency's alone")
	for _, r := range f.crm.Records() {
		require.NotEqual(t, lyonKey, r.RequestKey, "the generic CRM holds none of lyon's")
	}

	// Lyon's caller texts STOP to lyon's number: lyon's webhook, signed
	// under lyon's token, stops lyon's texts to the number, and the
	// default agency's to the same number go on.
	code, err := own.twilio.Reply(url+"/v1/agencies/lyon/tools/twilio/messages", "+33612345678", "+33700000001", "STOP")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	for ctx, want := range map[context.Context]bool{lyon: true, f.ctx: false} {
		stopped, err := f.acts.Store.TextsStopped(ctx, "+33612345678", "")
		require.NoError(t, err)
		require.Equal(t, want, stopped, agency.From(ctx).ID)
	}

	tl, err := f.catalog.Timeline(lyon, lyonKey)
	require.NoError(t, err)
	require.Len(t, tl.Calendar, 2, "lyon's timeline reads lyon's calendars")
	require.Equal(t, "confirmed", tl.Calendar[0].Status)
	require.NotNil(t, tl.CRM, "and lyon's HubSpot")
}

// An agency that set no account keeps no mirror: the deployment's own
// accounts (its flags) serve the default agency alone, so its booking
// puts no event in the deployment's calendar, no record in its CRM and
// sends no text through its Twilio account; the text waits.
func TestAnAgencyWithNoAccountsReachesNoneOfTheDeployments(t *testing.T) {
	t.Parallel()
	s, deployment := fakeTwilio(t)
	f := sendingWorker(t, func(f *fixture) { f.acts.SMS = s })
	nantes := f.addBareAgency("nantes")
	require.NoError(t, activities.EnsureMessages(nantes, f.client, f.queue))
	t.Cleanup(func() {
		_ = f.client.TerminateWorkflow(f.ctx, agency.Scoped(nantes, booking.MessagesIDPrefix+f.queue), "", "the test is over")
	})
	kr, secret := keysOf(t, apikey.Key{Name: "nantes", Scopes: []apikey.Scope{apikey.ScopeAgent}, Agency: "nantes"})
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: kr}})

	key := uuid.NewString()
	f.bookTexted(url, secret["nantes"], key, 10)
	f.eventually(func() bool {
		msgs, err := f.acts.Store.Messages(nantes, key)
		require.NoError(t, err)
		due, err := f.acts.Store.DueMessages(nantes, 20)
		require.NoError(t, err)
		return len(msgs) == 1 && msgs[0].Status == booking.MessageDue && len(due) == 0
	}, "no account of nantes's to send its text: the sender holds it")
	r, err := f.saga().Receipt(nantes, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, r.Status, "a booking with no mirror is confirmed all the same")
	require.Empty(t, r.ProviderEventID, "no calendar of nantes's names an event")

	require.Empty(t, deployment.Sent())
	require.Empty(t, liveIDs(f.calendar.Events(agentCal)))
	require.Empty(t, f.crm.Records())
}

// liveIDs are the ids of evs that are not cancelled.
func liveIDs(evs []calendar.Event) []string {
	var ids []string
	for _, ev := range evs {
		if ev.Status != "cancelled" {
			ids = append(ids, ev.Id)
		}
	}
	return ids
}

// agencyNo is agency id's number in the fixture's store.
func (f *fixture) agencyNo(id string) int {
	f.t.Helper()
	var no int
	require.NoError(f.t, f.pool.QueryRow(f.ctx, "SELECT agency_no FROM agency WHERE agency_id = $1", id).Scan(&no))
	return no
}
