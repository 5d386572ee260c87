package systemtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

const hubspotToken = "pat-na1-systemtest"

// setupHubSpot is setup with a HubSpot account beside the generic CRM,
// built as the worker builds them: the generic CRM stays the default, and
// paris-11's agency keeps HubSpot.
func setupHubSpot(t *testing.T) (*fixture, *hubspottest.Account) {
	t.Helper()
	f := fixtureOn(t, pgtest.New(t))
	account := hubspottest.New(hubspotToken)
	srv := httptest.NewServer(account)
	t.Cleanup(func() { account.Release(); srv.Close() })
	tokenFile := filepath.Join(t.TempDir(), "hubspot-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(hubspotToken+"\n"), 0o600))
	set, err := app.Mirrors{CRMBaseURL: f.crmURL, CRMToken: "crm-token", CRMTimeout: 2 * time.Second,
		HubSpot: app.HubSpot{TokenFile: tokenFile, URL: srv.URL, PerTenSeconds: 100}}.Connect(f.ctx, false)
	require.NoError(t, err)
	f.acts.CRM, f.catalog.CRM = set.CRM, set.CRM
	f.acts.CRMLang = "fr"
	f.seed()
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "paris-11", Kind: "property", Capacity: 1,
		TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test", CRM: "hubspot", DisplayName: "the Marais flat",
		DisplayNames: map[string]string{"fr": "l'appartement du Marais"}}))
	f.worker = f.startWorker(worker.Options{})
	return f, account
}

// The caller agreed to be kept on file: over MCP, five resent books, a
// reschedule and a cancel leave one meeting per booking, whose outcome
// followed, on one contact; the generic CRM, another agency's, holds
// none of them. Erased, the caller's contact leaves HubSpot and the
// meetings keep references only.
func TestAViewingLandsOnTheCallersHubSpotContact(t *testing.T) {
	t.Parallel()
	f, hs := setupHubSpot(t)
	url := f.serveAPI(app.EdgeConfig{})
	call := "call-" + uuid.NewString()
	args := bookArgs(t, 10)
	args["contact"] = map[string]any{"name": "Jeanne Dupont", "phone": "+33612345678", "email": "jeanne@example.com", "keep_on_file": true}
	var key string
	for range 5 {
		_, out := f.mcpCall(url, call, "book", args)
		require.Equal(t, "confirmed", out.Status, out.Line)
		key = out.RequestKey
	}
	f.eventually(func() bool { m := hs.Meetings(); return len(m) == 1 && len(m[0].Contacts) == 1 }, "one meeting on one contact")
	meeting := hs.Meetings()[0]
	require.Equal(t, "Visite : l'appartement du Marais avec l'agent", meeting.Properties["hs_meeting_title"], "in the agency's language")
	people := hs.Contacts()
	require.Len(t, people, 1)
	require.Equal(t, []string{people[0].ID}, meeting.Contacts)
	require.Equal(t, "jeanne@example.com", people[0].Properties["email"])

	move := bookArgs(t, 11)
	move["request_key"] = key
	_, out := f.mcpCall(url, call, "reschedule_booking", move)
	require.Equal(t, "confirmed", out.Status, out.Line)
	moved := out.RequestKey
	_, out = f.mcpCall(url, call, "cancel_booking", map[string]any{"request_key": moved})
	require.Equal(t, "cancelled", out.Status, out.Line)
	outcomes := func() []string {
		var o []string
		for _, m := range hs.Meetings() {
			o = append(o, m.Properties["hs_meeting_outcome"]+"@"+strings.Join(m.Contacts, ","))
		}
		slices.Sort(o)
		return o
	}
	want := []string{"CANCELED@" + people[0].ID, "RESCHEDULED@" + people[0].ID}
	f.eventually(func() bool { return slices.Equal(outcomes(), want) }, "the old meeting rescheduled, the new one cancelled, both on the caller")
	require.Len(t, hs.Contacts(), 1, "still one contact")
	require.Empty(t, f.crm.Records(), "the generic CRM is another agency's")
	rep := f.reconcile()
	require.Zero(t, rep.CRM.Missing+rep.CRM.Mismatched+rep.CRM.Failed, "nothing to repair")

	require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/bookings/"+key+"/contact", nil, nil))
	require.Positive(t, f.reconcile().ContactsPurged, "the erasure reaches HubSpot at the next run")
	require.Empty(t, hs.Contacts())
	require.Len(t, hs.Meetings(), 2, "the meetings stay")
	for _, m := range hs.Meetings() {
		require.Empty(t, m.Contacts)
		for k, v := range m.Properties {
			require.NotContains(t, v, "jeanne", k)
			require.NotContains(t, v, "612345678", k)
			require.NotContains(t, v, "Dupont", k)
		}
	}
	f.quiet()
	require.Empty(t, hs.Contacts(), "reconciliation does not bring the caller back")
}

// A caller who didn't agree to be kept on file is on no contact: the
// meeting holds references only.
func TestACallerNotOnFileIsNoHubSpotContact(t *testing.T) {
	t.Parallel()
	f, hs := setupHubSpot(t)
	url := f.serveAPI(app.EdgeConfig{})
	args := bookArgs(t, 10)
	args["contact"] = map[string]any{"name": "Sam", "phone": "+447700900123"}
	_, out := f.mcpCall(url, "call-"+uuid.NewString(), "book", args)
	require.Equal(t, "confirmed", out.Status, out.Line)
	f.eventually(func() bool { return len(hs.Meetings()) == 1 }, "the meeting")
	f.quiet()
	require.Empty(t, hs.Contacts())
	require.Empty(t, hs.Meetings()[0].Contacts)
}

// The agency's contacts are the agency's (DH2): a caller who gives the
// family's e-mail is linked to the agency's contact, one who shares only
// its landline gets a contact of the service's own; erased, and through
// the retention runs after, the agency's contact loses the meetings and
// stays, and the service's own is deleted.
func TestAnAgencysOwnHubSpotContactSurvivesTheCallersErasure(t *testing.T) {
	t.Parallel()
	f, hs := setupHubSpot(t)
	url := f.serveAPI(app.EdgeConfig{})
	family := hs.AddContact(map[string]string{"email": "famille.martin@example.com", "firstname": "Marie", "lastname": "Martin",
		"phone": "+33145678900"})
	book := func(hour int, contact map[string]any) string {
		args := bookArgs(t, hour)
		args["contact"] = contact
		_, out := f.mcpCall(url, "call-"+uuid.NewString(), "book", args)
		require.Equal(t, "confirmed", out.Status, out.Line)
		return out.RequestKey
	}
	byEmail := book(10, map[string]any{"name": "Jeanne Dupont", "email": "famille.martin@example.com", "keep_on_file": true})
	byPhone := book(12, map[string]any{"name": "Paul Durand", "phone": "+33145678900", "keep_on_file": true})
	f.eventually(func() bool {
		m := hs.Meetings()
		return len(m) == 2 && len(m[0].Contacts) == 1 && len(m[1].Contacts) == 1
	}, "both meetings on a contact")
	on := map[string]string{} // meeting's booking key: its contact
	for _, m := range hs.Meetings() {
		on[m.Properties["bookingsaga_request_key"]] = m.Contacts[0]
	}
	require.Equal(t, family, on[byEmail], "the same e-mail is the agency's contact")
	require.NotEqual(t, family, on[byPhone], "a shared landline with another name is not")
	require.Len(t, hs.Contacts(), 2)

	for _, key := range []string{byEmail, byPhone} {
		require.Equal(t, http.StatusOK, f.call("DELETE", url+"/v1/bookings/"+key+"/contact", nil, nil))
	}
	f.reconcile()
	f.reconcile()
	left := hs.Contacts()
	require.Len(t, left, 1, "the service's own contact is deleted")
	require.Equal(t, family, left[0].ID, "the agency's stays")
	require.Equal(t, "Marie", left[0].Properties["firstname"], "untouched")
	for _, m := range hs.Meetings() {
		require.Empty(t, m.Contacts, "no meeting of the erased callers is left on a contact")
	}
}
