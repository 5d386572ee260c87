package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/staff"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/visibility"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// addAgency makes agency id in the fixture's store and gives it the
// catalogue every test books, and accounts of its own at the fixture's
// fake calendar and CRM; the context acts for it.
func (f *fixture) addAgency(id string) context.Context {
	f.t.Helper()
	ctx := f.addBareAgency(id)
	f.setAccount(ctx, accounts.Google, map[string]string{"endpoint": f.calendarURL + "/calendar/v3/"})
	f.setAccount(ctx, accounts.CRM, map[string]string{"base_url": f.crmURL, "token": "crm-token"})
	return ctx
}

// addBareAgency is addAgency with no accounts.
func (f *fixture) addBareAgency(id string) context.Context {
	f.t.Helper()
	a := agency.Agency{ID: id}
	require.NoError(f.t, f.pool.QueryRow(f.ctx, "INSERT INTO agency (agency_id, name) VALUES ($1, $1) RETURNING agency_no", id).Scan(&a.No))
	ctx := agency.With(f.ctx, a)
	f.seedFor(ctx)
	return ctx
}

// setAccount stores the agency of ctx's account of kind, checked as the
// API checks it.
func (f *fixture) setAccount(ctx context.Context, kind string, settings any) {
	f.t.Helper()
	raw, err := json.Marshal(settings)
	require.NoError(f.t, err)
	require.NoError(f.t, f.mirrors.CheckAccount(ctx, kind, raw))
	require.NoError(f.t, f.acts.Store.PutMirrorAccount(ctx, kind, raw))
}

// fairnessOf is the fairness key the workflow wid's tasks are dispatched by.
func (f *fixture) fairnessOf(wid string) string {
	f.t.Helper()
	d, err := f.client.DescribeWorkflowExecution(f.ctx, wid, "")
	require.NoError(f.t, err)
	return d.GetWorkflowExecutionInfo().GetPriority().GetFairnessKey()
}

// agencyOf is the AgencyId search attribute the workflow wid carries, ""
// for none.
func (f *fixture) agencyOf(wid string) string {
	f.t.Helper()
	d, err := f.client.DescribeWorkflowExecution(f.ctx, wid, "")
	require.NoError(f.t, err)
	var id string
	if p := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[visibility.AttrAgency.GetName()]; p != nil {
		require.NoError(f.t, converter.GetDefaultDataConverter().FromPayload(p, &id))
	}
	return id
}

// Two agencies on one deployment use the same request_key for the same
// slot: two sagas, two bookings, each agency's own. A cancel, a move and
// a reference in one touch nothing of the other, and an operator finds
// each agency's sagas by its search attribute.
func TestTwoAgenciesBookWithOneRequestKeyApart(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lyon := f.addAgency("lyon")
	sc := f.saga()
	const key = "agencies-k1"
	start := slot(t, 10)

	paris, err := sc.Commit(f.ctx, key, commitRequest(start))
	require.NoError(t, err)
	other, err := sc.Commit(lyon, key, commitRequest(start))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, paris.Status)
	require.Equal(t, receipt.StatusConfirmed, other.Status, "the same slot is lyon's to book too")
	require.NotEqual(t, paris.BookingID, other.BookingID)
	require.Equal(t, gcal.EventID(key), paris.ProviderEventID)
	require.Equal(t, gcal.EventID("agency:lyon:"+key), other.ProviderEventID, "lyon's receipt names lyon's event, as its mirror writes it")
	require.Equal(t, "", f.agencyOf(key), "the default agency's saga keeps its id and carries no agency")
	require.Equal(t, "lyon", f.agencyOf("agency:lyon:"+key))
	require.Equal(t, "default", f.fairnessOf(key), "each agency's tasks are dispatched by its own fairness key")
	require.Equal(t, "lyon", f.fairnessOf("agency:lyon:"+key))

	// A reference is found in its own agency only.
	f.eventually(func() bool {
		found, err := sc.KeyByReference(lyon, receipt.Reference(key))
		return err == nil && found == key
	}, "lyon's saga found by its reference")

	// Lyon moves its booking: the new saga is lyon's, a child of the old.
	moved, err := sc.Reschedule(lyon, key, "agencies-k2", commitRequest(start.Add(time.Hour)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, moved.Status)
	require.Equal(t, "lyon", f.agencyOf("agency:lyon:agencies-k2"))
	require.Equal(t, "lyon", f.fairnessOf("agency:lyon:agencies-k2"), "a child inherits its saga's fairness key")
	f.eventually(func() bool {
		r, err := sc.Receipt(lyon, key)
		return err == nil && r.Status == receipt.StatusRescheduled
	}, "lyon's old booking released for its move")
	_, err = f.client.DescribeWorkflowExecution(f.ctx, "agencies-k2", "")
	require.Error(t, err, "the move started no saga in the default agency's space")

	cancelled, err := sc.Cancel(lyon, "agencies-k2")
	require.NoError(t, err)
	require.Equal(t, receipt.StatusCancelled, cancelled.Status)
	still, err := sc.Receipt(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, still.Status, "lyon's move and cancel left the default agency's booking")
	require.Equal(t, paris.BookingID, still.BookingID)

	for ctx, want := range map[context.Context][]string{f.ctx: {key}, lyon: {"agency:lyon:agencies-k2", "agency:lyon:" + key}} {
		query := visibility.InAgency(agency.From(ctx)) + ` AND TaskQueue = "` + f.queue + `" AND WorkflowType = "Booking"`
		f.eventually(func() bool { return sameIDs(f.list(query), want) }, "each agency's sagas under its filter")
	}
}

// agencyAPI serves the API, configured as cfg, to two keys with the
// agent and admin scopes: paris, of the default agency, and lyon, of the
// agency lyon made here; as is the header of either's calls.
func (f *fixture) agencyAPI(cfg app.EdgeConfig) (url string, secret map[string]string, as func(key string) []string) {
	f.t.Helper()
	f.addAgency("lyon")
	all := []apikey.Scope{apikey.ScopeAgent, apikey.ScopeAdmin}
	cfg.Keys, secret = keysOf(f.t, apikey.Key{Name: "paris", Scopes: all}, apikey.Key{Name: "lyon", Scopes: all, Agency: "lyon"})
	return f.serveAPI(cfg), secret, func(key string) []string { return []string{"Authorization", "Bearer " + secret[key]} }
}

// list is the workflow ids query finds.
func (f *fixture) list(query string) []string {
	res, err := f.client.ListWorkflow(f.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
	require.NoError(f.t, err)
	var ids []string
	for _, ex := range res.GetExecutions() {
		ids = append(ids, ex.GetExecution().GetWorkflowId())
	}
	return ids
}

func sameIDs(got, want []string) bool {
	slices.Sort(got)
	return slices.Equal(got, slices.Sorted(slices.Values(want)))
}

// keysOf is a keys file of a new key per entry, loaded, and each key's
// secret by its name.
func keysOf(t testing.TB, keys ...apikey.Key) (*apikey.Keyring, map[string]string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "keys.json")
	secrets := map[string]string{}
	for _, k := range keys {
		secret, made, err := apikey.NewKey(k.Name, k.Scopes...)
		require.NoError(t, err)
		made.Agency = k.Agency
		require.NoError(t, apikey.SaveKey(file, made, false))
		secrets[k.Name] = secret
	}
	kr, err := apikey.LoadKeyring(file)
	require.NoError(t, err)
	return kr, secrets
}

// A key acts for its agency, and only for it: a platform key makes the
// agency and can do nothing else; the agency's admin key writes its own
// catalogue; every route that names a booking, called with its key on
// the default agency's booking, answers as for a key that was never
// used, and changes nothing; the same request_key then books in each.
func TestAKeyActsForItsAgencyOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	all := []apikey.Scope{apikey.ScopeAgent, apikey.ScopeAdmin, apikey.ScopeOps}
	kr, secret := keysOf(t, apikey.Key{Name: "platform", Scopes: []apikey.Scope{apikey.ScopePlatform}},
		apikey.Key{Name: "paris", Scopes: all}, apikey.Key{Name: "lyon", Scopes: all, Agency: "lyon"},
		apikey.Key{Name: "nantes", Scopes: all, Agency: "nantes"})
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: kr}})
	as := func(key string) []string { return []string{"Authorization", "Bearer " + secret[key]} }
	var e edge.Error

	require.Equal(t, http.StatusUnauthorized, f.call("GET", url+"/v1/policy", nil, &e, as("lyon")...), "lyon before it exists")
	var made api.AgencyAnswer
	require.Equal(t, http.StatusCreated, f.call("PUT", url+"/v1/agencies/lyon", api.AgencyBody{Name: "Lyon"}, &made, as("platform")...))
	require.Equal(t, api.AgencyAnswer{ID: "lyon", Name: "Lyon"}, made)
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/agencies/lyon", api.AgencyBody{Name: "Agence de Lyon"}, &made, as("platform")...))
	require.Equal(t, http.StatusBadRequest, f.call("PUT", url+"/v1/agencies/Lyon%20Sud", api.AgencyBody{}, &e, as("platform")...))
	require.Equal(t, "invalid_agency", e.Code)
	var list api.AgencyList
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/agencies", nil, &list, as("platform")...))
	require.Equal(t, []api.AgencyAnswer{{ID: "default", Name: "default"}, {ID: "lyon", Name: "Agence de Lyon"}}, list.Agencies)
	require.Equal(t, http.StatusUnauthorized, f.call("GET", url+"/v1/policy", nil, &e, as("nantes")...), "an agency never made")

	start := slot(t, 10)
	var paris receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody("k-shared", start), &paris, as("paris")...))
	require.Equal(t, receipt.StatusConfirmed, paris.Status)
	for _, c := range []struct{ method, path string }{{"POST", "/v1/bookings"}, {"GET", "/v1/bookings/k-shared"}, {"PUT", "/v1/policy"}} {
		require.Equal(t, http.StatusForbidden, f.call(c.method, url+c.path, []byte(`{}`), &e, as("platform")...), "platform key: %s %s", c.method, c.path)
		require.Equal(t, "wrong_scope", e.Code)
	}

	// Lyon's admin writes lyon's catalogue: the same ids as the default
	// agency's, its own.
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/policy", api.PolicyBody{Version: policyVersion, SlotMinutes: 30,
		OpensAt: "08:00", ClosesAt: "20:00", HoldTTLMinutes: 10, MinNoticeMinutes: 60}, &e, as("lyon")...), "%+v", e)
	for _, id := range []string{"paris-11", "agent-00"} {
		kind := map[string]string{"paris-11": "property", "agent-00": "agent"}[id]
		require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/resources/"+id,
			api.ResourceBody{Kind: kind, Capacity: 1, TimeZone: "Europe/Paris"}, &e, as("lyon")...), "%+v", e)
	}

	// The default agency's own property and webhook endpoint, which lyon
	// has not.
	require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/resources/paris-only",
		api.ResourceBody{Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"}, &e, as("paris")...), "%+v", e)
	hooks := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(hooks.Close)
	require.Equal(t, http.StatusCreated, f.call("PUT", url+"/v1/webhooks/ep-paris", api.WebhookBody{URL: hooks.URL + "/hooks"},
		&map[string]any{}, as("paris")...))
	resource := map[string]string{"k-shared": "paris-only", "k-never": "never-a-property"}
	endpoint := map[string]string{"k-shared": "ep-paris", "k-never": "ep-never"}

	// Every route that names a booking, a property or an endpoint, on the
	// default agency's: lyon's key gets what a key never used gets.
	byKey := func(format string) func(string) string {
		return func(k string) string { return fmt.Sprintf(format, k) }
	}
	for _, c := range []struct {
		method string
		path   func(key string) string
		body   any
	}{
		{"GET", byKey("/v1/bookings/%s"), nil},
		{"GET", func(k string) string { return "/v1/bookings?reference=" + receipt.Reference(k) }, nil},
		{"POST", byKey("/v1/bookings/%s/cancel"), []byte(`{}`)},
		{"POST", byKey("/v1/bookings/%s/reschedule"), edge.RescheduleBody{NewRequestKey: "k-moved", ExpectedPolicyVersion: policyVersion,
			Slot: bookingBody("", start.Add(time.Hour)).Slot}},
		{"GET", byKey("/v1/bookings/%s/contact"), nil},
		{"DELETE", byKey("/v1/bookings/%s/contact"), nil},
		{"GET", byKey("/v1/ops/timeline/%s"), nil},
		{"POST", byKey("/v1/bookings/%s/outcome"), staff.OutcomeBody{Outcome: booking.OutcomeNoShow}},
		{"POST", byKey("/v1/bookings/%s/reassign"), staff.ReassignBody{AgentID: "agent-01"}},
		{"GET", func(k string) string { return "/v1/resources/" + resource[k] }, nil},
		{"GET", func(k string) string {
			return "/v1/availability?property_id=" + resource[k] + "&agent_id=agent-00&from=" +
				start.Format(time.RFC3339) + "&to=" + start.Add(4*time.Hour).Format(time.RFC3339)
		}, nil},
		{"DELETE", func(k string) string { return "/v1/webhooks/" + endpoint[k] }, nil},
		{"POST", func(k string) string { return "/v1/webhooks/" + endpoint[k] + "/pause" }, nil},
		{"POST", func(k string) string { return "/v1/webhooks/" + endpoint[k] + "/resume" }, nil},
		{"POST", func(k string) string { return "/v1/webhooks/" + endpoint[k] + "/secret" }, nil},
	} {
		var theirs, never edge.Error
		got := f.call(c.method, url+c.path("k-shared"), c.body, &theirs, as("lyon")...)
		want := f.call(c.method, url+c.path("k-never"), c.body, &never, as("paris")...)
		require.Equal(t, want, got, "%s %s", c.method, c.path("k-shared"))
		require.Equal(t, never.Code, theirs.Code, "%s %s", c.method, c.path("k-shared"))
	}
	intent := func(property string) api.IntentBody {
		slot := bookingBody("", start).Slot
		slot.PropertyID = property
		return api.IntentBody{ConversationID: "call-1", Slot: slot, Hold: true, ExpectedPolicyVersion: policyVersion}
	}
	var theirs, never api.IntentAnswer
	require.Equal(t, f.call("POST", url+"/v1/intents", intent("never-a-property"), &never, as("paris")...),
		f.call("POST", url+"/v1/intents", intent("paris-only"), &theirs, as("lyon")...))
	require.Equal(t, receipt.StatusRejected, theirs.Hold.Status, "a hold on the default agency's property")
	require.Equal(t, string(booking.CodeUnknownResource), theirs.Hold.Reason.Code)
	require.Equal(t, never.Hold.Reason.Code, theirs.Hold.Reason.Code)

	var still receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/k-shared", nil, &still, as("paris")...))
	require.Equal(t, receipt.StatusConfirmed, still.Status, "lyon's calls changed the default agency's booking")

	var other receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody("k-shared", start), &other, as("lyon")...))
	require.Equal(t, receipt.StatusConfirmed, other.Status, "the same key and slot, lyon's own")
	require.NotEqual(t, paris.BookingID, other.BookingID)
	require.Equal(t, "lyon", f.agencyOf("agency:lyon:k-shared"))
	require.Equal(t, 1, f.bookings(), "the default agency holds its one booking")
	var eps []api.WebhookStatus
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/webhooks", nil, &eps, as("lyon")...))
	require.Empty(t, eps, "lyon lists the default agency's endpoint")
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/webhooks", nil, &eps, as("paris")...))
	require.Len(t, eps, 1, "the default agency's endpoint, untouched")
	require.False(t, eps[0].Paused, "lyon's pause reached the default agency's endpoint")
}

// The default agency's reconciliation run starts one in every other
// agency, which repairs that agency's calendar; the default's run finds
// nothing of it.
func TestEachAgencyIsReconciledInItsOwnRun(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lyon := f.addAgency("lyon")
	const key = "lyon-reconciled"
	r, err := f.saga().Commit(lyon, key, commitRequest(slot(t, 11)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	f.eventually(func() bool { return f.synced("agency:lyon:" + key) }, "lyon's booking mirrored")
	f.deleteByHand(agentCal, "agency:lyon:"+key)

	rep := f.reconcile()
	require.Zero(t, rep.Calendar.Missing, "the default agency's run repaired lyon's calendar: %v", rep.Calendar.Details)
	require.Empty(t, rep.Failed)
	child := "agency:lyon:" + booking.ReconcileRunID
	require.Equal(t, "lyon", f.agencyOf(child))
	require.Equal(t, "lyon", f.fairnessOf(child), "the default agency's run starts lyon's under lyon's fairness key")
	var theirs workflows.ReconcileReport
	require.NoError(t, f.client.GetWorkflow(f.ctx, child, "").Get(f.ctx, &theirs))
	require.Equal(t, 1, theirs.Calendar.Missing, theirs.Calendar.Details)
	require.Equal(t, "confirmed", f.event(agentCal, "agency:lyon:"+key).Status)
}

// Each agency names its own resources: lyon's admin naming its paris-11
// changes no word the default agency's callers hear of the default
// agency's paris-11, and lyon's callers hear lyon's name.
func TestEachAgencysCallersHearItsOwnNames(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url, _, as := f.agencyAPI(app.EdgeConfig{})
	var e edge.Error
	for key, name := range map[string]string{"paris": "the Marais flat", "lyon": "the Croix-Rousse flat"} {
		require.Equal(t, http.StatusOK, f.call("PUT", url+"/v1/resources/paris-11", api.ResourceBody{Kind: "property", Capacity: 1,
			TimeZone: "Europe/Paris", DisplayName: name}, &e, as(key)...), "%+v", e)
	}
	for i, c := range []struct{ key, hears, never string }{
		{"paris", "the Marais flat", "Croix-Rousse"}, {"lyon", "the Croix-Rousse flat", "Marais"},
	} {
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(fmt.Sprint("names-", i), slot(t, 10+i)), &r, as(c.key)...))
		require.Equal(t, receipt.StatusConfirmed, r.Status)
		require.Contains(t, r.Spoken, c.hears, c.key)
		require.NotContains(t, r.Spoken, c.never, "%s's caller hears another agency's name", c.key)
	}
}

// Each agency's commits check its own calendars for events written past
// the service: the default agency's agent has a dentist at noon, lyon's
// agent of the same id keeps a calendar of its own. Whichever agency
// committed first, the default agency's noon is refused and lyon's booked.
func TestEachAgencysCommitChecksItsOwnCalendars(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lyon := f.addAgency("lyon")
	for id, cal := range map[string]string{"paris-11": "lyon-flat@calendar.test", "agent-00": "lyon-agent@calendar.test"} {
		kind := map[string]string{"paris-11": "property", "agent-00": "agent"}[id]
		require.NoError(t, f.acts.Store.UpsertResource(lyon, booking.Resource{ID: id, Kind: kind, Capacity: 1, TimeZone: "Europe/Paris",
			CalendarID: cal}))
	}
	f.calendar.Put(agentCal, &calendar.Event{Id: "dentist01", Summary: "dentist",
		Start: &calendar.EventDateTime{DateTime: slot(t, 12).Format(time.RFC3339)},
		End:   &calendar.EventDateTime{DateTime: slot(t, 13).Format(time.RFC3339)}})
	sc := f.saga()

	first, err := sc.Commit(lyon, uuid.NewString(), commitRequest(slot(t, 9)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, first.Status, "lyon's commit reads lyon's calendars first")
	busy, err := sc.Commit(f.ctx, uuid.NewString(), commitRequest(slot(t, 12)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConflict, busy.Status, "the default agency's agent is at the dentist: its calendar, not lyon's")
	free, err := sc.Commit(lyon, uuid.NewString(), commitRequest(slot(t, 12)))
	require.NoError(t, err)
	require.Equal(t, receipt.StatusConfirmed, free.Status, "lyon's agent keeps another calendar, free at noon")
}
