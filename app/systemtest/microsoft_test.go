package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// microsoftAgent puts an agent whose calendar is the fake tenant's
// mailbox, through the API as an operator would; it returns the API.
func (f *fixture) microsoftAgent() string {
	f.t.Helper()
	apiURL := f.serveAPI(app.EdgeConfig{})
	status, out := f.putResource(apiURL, "agent-ms", api.ResourceBody{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris",
		CalendarID: agentMailbox, CalendarProvider: booking.ProviderMicrosoft})
	require.Equal(f.t, http.StatusOK, status, out)
	require.Equal(f.t, "microsoft", out["calendar_provider"])
	return apiURL
}

// ourGraphEvents are the events in the mailbox that carry key.
func (f *fixture) ourGraphEvents(key string) []graphtest.GraphEvent {
	var out []graphtest.GraphEvent
	for _, ev := range f.graph.Events(agentMailbox) {
		for _, v := range ev.Properties {
			if v == key {
				out = append(out, ev)
			}
		}
	}
	return out
}

func msCommit(start time.Time) booking.CommitRequest {
	req := commitRequest(start)
	req.Intent.AgentID = "agent-ms"
	return req
}

// One booking on a property in Google Calendar and an agent in Microsoft
// 365 writes one event in each; a hand-deleted event in either is written
// again by the next reconcile run, a hand-typed one over it is flagged and
// left alone; cancelling removes both.
func TestABookingAcrossGoogleAndMicrosoft365(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.microsoftAgent()
	key := uuid.NewString()
	r := f.commit(key, msCommit(slot(t, 10)))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	require.Equal(t, gcal.EventID(key), r.ProviderEventID, "the property's calendar comes first, and Google's ids derive from the key")
	f.eventually(func() bool { return f.synced(key) }, "mirrored")
	require.Equal(t, 1, f.liveEvents(propertyCal))
	require.Equal(t, "confirmed", f.event(propertyCal, key).Status)
	ms := f.ourGraphEvents(key)
	require.Len(t, ms, 1, "one event in the agent's mailbox")
	require.True(t, ms[0].Start.Equal(slot(t, 10)) && ms[0].End.Equal(slot(t, 10).Add(30*time.Minute)))

	tl, err := f.catalog.Timeline(f.ctx, key)
	require.NoError(t, err)
	require.Empty(t, tl.Errors)
	require.Len(t, tl.Calendar, 2)
	require.Equal(t, []string{"google", "microsoft"}, []string{tl.Calendar[0].Provider, tl.Calendar[1].Provider})
	require.Equal(t, "confirmed", tl.Calendar[1].Status)

	f.graph.Remove(agentMailbox, ms[0].ID)
	rep := f.reconcile()
	require.Equal(t, 1, rep.Calendar.Missing, rep.Calendar.Details)
	require.Len(t, f.ourGraphEvents(key), 1, "written again in the mailbox")
	f.quiet()

	// Someone types an appointment into the agent's Outlook over the
	// booking: flagged for a human, never touched.
	dentist := f.graph.Put(agentMailbox, graphtest.GraphEvent{Subject: "Dentist", Start: slot(t, 10).Add(10 * time.Minute), End: slot(t, 11)})
	rep = f.reconcile()
	require.Equal(t, 1, rep.Calendar.Flagged, rep.Calendar.Details)
	flags, err := f.acts.Store.OpenFlags(f.ctx)
	require.NoError(t, err)
	require.Len(t, flags, 1)
	require.Equal(t, dentist, flags[0].EventID)
	require.Equal(t, agentMailbox, flags[0].CalendarID)
	require.Len(t, f.graph.Events(agentMailbox), 2, "the dentist stays")
	f.quiet()

	f.deleteByHand(propertyCal, key)
	rep = f.reconcile()
	require.Equal(t, 1, rep.Calendar.Missing, rep.Calendar.Details)
	require.Equal(t, "confirmed", f.event(propertyCal, key).Status)
	f.quiet()

	_, err = f.saga().Cancel(f.ctx, key)
	require.NoError(t, err)
	f.eventually(func() bool { return f.liveEvents(propertyCal) == 0 && len(f.ourGraphEvents(key)) == 0 }, "both events removed")
	require.Len(t, f.graph.Events(agentMailbox), 1, "the dentist still stays")
	f.quiet()
}

// The commit's free/busy re-check reads the Microsoft mailbox too: an
// event typed into Outlook there refuses the slot, and availability does
// not offer it.
func TestTheCommitSeesAnEventTypedIntoOutlook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.microsoftAgent()
	f.graph.Put(agentMailbox, graphtest.GraphEvent{Subject: "Dentist", Start: slot(t, 10), End: slot(t, 11)})

	r := f.commit(uuid.NewString(), msCommit(slot(t, 10)))
	require.Equal(t, receipt.StatusConflict, r.Status, "the mailbox is busy then")
	noon := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(noon, msCommit(slot(t, 12))).Status)
	f.eventually(func() bool { return f.synced(noon) }, "mirrored")
	evs := f.graph.Events(agentMailbox)
	require.Len(t, evs, 2, "the dentist, untouched, and our booking at noon")
	require.Equal(t, "Dentist", evs[0].Subject)

	q := url.Values{"property_id": {"paris-11"}, "agent_id": {"agent-ms"},
		"from": {slot(t, 9).Format(time.RFC3339)}, "to": {slot(t, 12).Format(time.RFC3339)}}
	var av edge.AvailabilityAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/availability?"+q.Encode(), nil, &av))
	var offered []string
	for _, s := range av.Slots {
		offered = append(offered, s.LocalStart[len("2006-01-02T"):])
	}
	require.Equal(t, []string{"09:00", "09:30", "11:00", "11:30"}, offered)
}

// A provider the service does not know, or one named without a calendar,
// is refused with its code and writes nothing.
func TestAnUnknownCalendarProviderIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.serveAPI(app.EdgeConfig{})
	for _, body := range []api.ResourceBody{
		{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "x@agency.example", CalendarProvider: "outlook"},
		{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarProvider: "microsoft"},
	} {
		status, out := f.putResource(apiURL, "agent-bad", body)
		require.Equal(t, http.StatusBadRequest, status, out)
		require.Equal(t, "invalid_resource", out["code"], out)
	}
	require.Equal(t, http.StatusNotFound, f.call("GET", apiURL+"/v1/resources/agent-bad", nil, nil))
}

// A client that does not know calendar_provider (one generated before it
// existed) sends a resource without it: the same calendar keeps its
// provider, and only a new calendar id falls back to Google.
func TestAPutWithoutTheProviderKeepsIt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.microsoftAgent()
	status, out := f.putResource(apiURL, "agent-ms", api.ResourceBody{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris",
		CalendarID: agentMailbox, DisplayName: "Hugo"})
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "microsoft", out["calendar_provider"])
	var got api.ResourceAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/resources/agent-ms", nil, &got))
	require.Equal(t, booking.ProviderMicrosoft, got.CalendarProvider)
	require.Equal(t, "Hugo", got.DisplayName)

	status, out = f.putResource(apiURL, "agent-ms", api.ResourceBody{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris",
		CalendarID: "hugo@agency.example"})
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "google", out["calendar_provider"], "a new calendar id without a provider is Google's")
}
