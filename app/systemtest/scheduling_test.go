package systemtest

import (
	"fmt"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

func parisZone(t *testing.T) *time.Location {
	t.Helper()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	return loc
}

func (f *fixture) putResource(url, id string, body api.ResourceBody) (int, map[string]any) {
	f.t.Helper()
	var out map[string]any
	return f.call("PUT", url+"/v1/resources/"+id, body, &out), out
}

// A holiday and time off are refused at commit through the API with
// alternatives on open times; a bad schedule is refused with its code and
// changes nothing; a booking that new hours no longer allow stands, and
// ops attention lists it.
func TestHoursAndTimeOffThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.serveAPI(app.EdgeConfig{})
	loc := parisZone(t)
	holiday := slot(t, 10)
	offStart := slot(t, 14).AddDate(0, 0, 1)
	standing := slot(t, 15).AddDate(0, 0, 2)
	var first receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", bookingBody(uuid.NewString(), standing), &first))
	require.Equal(t, receipt.StatusConfirmed, first.Status)

	property := api.ResourceBody{Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test",
		Rules: &booking.Rules{Overrides: []booking.DateHours{{Date: holiday.In(loc).Format(time.DateOnly), Closed: true}}}}
	status, _ := f.putResource(apiURL, "paris-11", property)
	require.Equal(t, http.StatusOK, status)
	agent := api.ResourceBody{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "agent-00@calendar.test",
		Rules: &booking.Rules{TimeOff: []booking.Span{{Start: offStart, End: offStart.Add(2 * time.Hour)}, {Start: standing, End: standing.Add(time.Hour)}}}}
	status, _ = f.putResource(apiURL, "agent-00", agent)
	require.Equal(t, http.StatusOK, status)

	for _, c := range []struct {
		at   time.Time
		code booking.Code
	}{{holiday, booking.CodeOutsideHours}, {offStart.Add(30 * time.Minute), booking.CodeTimeOff}} {
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", bookingBody(uuid.NewString(), c.at), &r))
		require.Equal(t, receipt.StatusRejected, r.Status)
		require.Equal(t, string(c.code), r.Reason.Code, r.Reason.Message)
		require.NotEmpty(t, r.Alternatives, "a refused time comes with open ones")
		for _, alt := range r.Alternatives {
			require.NotEqual(t, holiday.In(loc).Format(time.DateOnly), alt.StartsAt.In(loc).Format(time.DateOnly), "no alternative on the holiday")
			require.False(t, alt.StartsAt.Before(offStart.Add(2*time.Hour)) && alt.EndsAt.After(offStart), "no alternative in the time off")
		}
	}

	var got api.ResourceAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/resources/paris-11", nil, &got))
	require.Equal(t, property.Rules, got.Rules)
	bad := property
	bad.Rules = &booking.Rules{Hours: []booking.WeeklyHours{{Day: "mon", Opens: "09:00", Closes: "12:00"}, {Day: "mon", Opens: "11:00", Closes: "13:00"}}}
	status, refusal := f.putResource(apiURL, "paris-11", bad)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_hours", refusal["code"])
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/resources/paris-11", nil, &got))
	require.Equal(t, property.Rules, got.Rules, "nothing written")

	var attention struct {
		OutsideRules []booking.OutsideRules `json:"OutsideRules"`
	}
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/ops/attention", nil, &attention))
	require.Len(t, attention.OutsideRules, 1)
	require.Equal(t, first.RequestKey, attention.OutsideRules[0].RequestKey)
	var still receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/bookings/"+first.RequestKey, nil, &still))
	require.Equal(t, receipt.StatusConfirmed, still.Status, "the booking stands")
}

// Staff page through a property's bookings with the cursor: 500 bookings,
// none missing, none twice, in order.
func TestStaffPageThroughFiveHundredBookings(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.serveAPI(app.EdgeConfig{})
	st := f.acts.Store
	require.NoError(t, st.UpsertResource(f.ctx, booking.Resource{ID: "tower", Kind: "property", Capacity: 20, TimeZone: "Europe/Paris"}))
	for a := range 20 {
		require.NoError(t, st.UpsertResource(f.ctx, booking.Resource{ID: fmt.Sprintf("team-%02d", a), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	}
	want := map[string]bool{}
	day := slot(t, 8)
	for n := range 500 {
		start := day.AddDate(0, 0, n/480).Add(time.Duration(n%480/20) * 30 * time.Minute)
		key := fmt.Sprintf("tower-%03d", n)
		_, err := st.Commit(f.ctx, store.CommitRequest{CommitRequest: booking.CommitRequest{RequestKey: key, ExpectedPolicyVersion: policyVersion,
			Intent: booking.Intent{PropertyID: "tower", AgentID: fmt.Sprintf("team-%02d", n%20), StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}}})
		require.NoError(t, err)
		want[key] = true
	}
	q := url.Values{"property_id": {"tower"}, "from": {day.Add(-time.Hour).Format(time.RFC3339)},
		"to": {day.AddDate(0, 0, 3).Format(time.RFC3339)}, "limit": {"37"}}
	seen := map[string]bool{}
	var last api.ListedBooking
	pages := 0
	for {
		var page api.BookingList
		require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/bookings?"+q.Encode(), nil, &page))
		pages++
		for _, b := range page.Bookings {
			require.False(t, seen[b.RequestKey], "%s listed twice", b.RequestKey)
			require.True(t, b.StartsAt.After(last.StartsAt) || b.StartsAt.Equal(last.StartsAt) && b.RequestKey > last.RequestKey, "in order")
			seen[b.RequestKey], last = true, b
		}
		if page.NextCursor == "" {
			break
		}
		q.Set("cursor", page.NextCursor)
	}
	require.Equal(t, want, seen)
	require.Equal(t, 14, pages, "500 in pages of 37")
	q.Set("cursor", "not-a-cursor")
	var refusal map[string]any
	require.Equal(t, http.StatusBadRequest, f.call("GET", apiURL+"/v1/bookings?"+q.Encode(), nil, &refusal))
}

// A hold placed through the API is SELECTED in the saga's search
// attribute, blocks a competitor, and frees the slot when it expires.
func TestAHoldThroughTheAPIIsSelectedAndExpires(t *testing.T) {
	t.Parallel()
	f := setup(t)
	short := booking.Policy{Version: "short-holds", SlotMinutes: 30, OpensAt: 8 * time.Hour, ClosesAt: 20 * time.Hour,
		HoldTTL: 2 * time.Second, MinNotice: time.Hour}
	require.NoError(t, f.acts.Store.SetPolicy(f.ctx, short))
	apiURL := f.serveAPI(app.EdgeConfig{})
	start := slot(t, 16)
	slotBody := edge.Slot{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: start.Format(time.RFC3339), TimeZone: "Europe/Paris", DurationMinutes: 30}
	var held api.IntentAnswer
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/intents", api.IntentBody{ConversationID: "call-" + uuid.NewString(),
		Slot: slotBody, Hold: true, ExpectedPolicyVersion: short.Version}, &held))
	require.Equal(t, receipt.StatusHeld, held.Hold.Status)
	f.eventually(func() bool { return f.bookingStatus(held.RequestKey) == "SELECTED" }, "the list shows the hold as SELECTED")

	rival := bookingBody(uuid.NewString(), start)
	rival.ExpectedPolicyVersion = short.Version
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", rival, &r))
	require.Equal(t, receipt.StatusConflict, r.Status, "the hold blocks a competitor")

	f.eventually(func() bool {
		var s receipt.Receipt
		return f.call("GET", apiURL+"/v1/bookings/"+held.RequestKey, nil, &s) == http.StatusOK && s.Status == receipt.StatusExpired
	}, "the hold expires")
	late := bookingBody(uuid.NewString(), start)
	late.ExpectedPolicyVersion = short.Version
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", late, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status, "the expired hold freed the slot")
}

// bookingStatus is the BookingStatus search attribute the list view shows.
func (f *fixture) bookingStatus(key string) string {
	res, err := f.client.ListWorkflow(f.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + key + "'"})
	if err != nil || len(res.GetExecutions()) == 0 {
		return ""
	}
	var s string
	p := res.GetExecutions()[0].GetSearchAttributes().GetIndexedFields()[visibility.AttrStatus.GetName()]
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &s) != nil {
		return ""
	}
	return s
}

// Five callers race through the API for one slot with a team of three:
// three confirmations, each naming a different agent, two conflicts; a
// resent call of each key answers the same.
func TestFiveCallersRaceForATeamOfThree(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apiURL := f.serveAPI(app.EdgeConfig{})
	status, _ := f.putResource(apiURL, "hall", api.ResourceBody{Kind: "property", Capacity: 5, TimeZone: "Europe/Paris"})
	require.Equal(t, http.StatusOK, status)
	var members []string
	for i := range 3 {
		id := fmt.Sprintf("team-%d", i)
		status, _ = f.putResource(apiURL, id, api.ResourceBody{Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"})
		require.Equal(t, http.StatusOK, status)
		members = append(members, id)
	}
	var pool booking.Pool
	require.Equal(t, http.StatusOK, f.call("PUT", apiURL+"/v1/pools/viewings", api.PoolBody{Members: members}, &pool))
	var refusal map[string]any
	require.Equal(t, http.StatusBadRequest, f.call("PUT", apiURL+"/v1/pools/nobody", api.PoolBody{}, &refusal))
	require.Equal(t, "empty_pool", refusal["code"])

	start := slot(t, 11)
	body := func(key string) api.BookingBody {
		return api.BookingBody{RequestKey: key, ExpectedPolicyVersion: policyVersion, Slot: edge.Slot{PropertyID: "hall", AgentID: "any",
			AgentPool: "viewings", StartsAt: start.Format(time.RFC3339), TimeZone: "Europe/Paris", DurationMinutes: 30}}
	}
	keys := make([]string, 5)
	got := make([]receipt.Receipt, 5)
	done := make(chan int)
	for i := range keys {
		keys[i] = uuid.NewString()
		go func() {
			f.call("POST", apiURL+"/v1/bookings", body(keys[i]), &got[i])
			done <- i
		}()
	}
	for range keys {
		<-done
	}
	agents := map[string]bool{}
	conflicts := 0
	for _, r := range got {
		switch r.Status {
		case receipt.StatusConfirmed:
			require.Contains(t, members, r.AgentRef)
			require.False(t, agents[r.AgentRef], "%s booked twice", r.AgentRef)
			agents[r.AgentRef] = true
		case receipt.StatusConflict:
			conflicts++
		default:
			t.Fatalf("unexpected %s", r.Status)
		}
	}
	require.Len(t, agents, 3)
	require.Equal(t, 2, conflicts)
	for _, r := range got {
		if r.Status == receipt.StatusConflict {
			require.NotEmpty(t, r.Alternatives, "a team's conflict offers other times")
		}
	}
	for i, key := range keys {
		var again receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", body(key), &again))
		require.Equal(t, got[i].Status, again.Status)
		require.Equal(t, got[i].AgentRef, again.AgentRef, "a resent call names the same agent")
	}
	q := url.Values{"property_id": {"hall"}, "agent_pool": {"viewings"}, "from": {start.Format(time.RFC3339)},
		"to": {start.Add(time.Hour).Format(time.RFC3339)}}
	var av edge.AvailabilityAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/availability?"+q.Encode(), nil, &av))
	require.Len(t, av.Slots, 1, "the team is full at the raced time, free half an hour later")
}

// A team booking reads each member's calendar: a member with a hand-typed
// event is passed over, a slot where every member is busy is neither
// offered nor booked, and its conflict comes with alternatives.
func TestATeamBookingReadsEachMembersCalendar(t *testing.T) {
	t.Parallel()
	f := setup(t)
	st := f.acts.Store
	require.NoError(t, st.UpsertResource(f.ctx, booking.Resource{ID: "hall", Kind: "property", Capacity: 5, TimeZone: "Europe/Paris"}))
	for _, id := range []string{"cal-a", "cal-b"} {
		require.NoError(t, st.UpsertResource(f.ctx, booking.Resource{ID: id, Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: id + "@calendar.test"}))
	}
	require.NoError(t, st.PutPool(f.ctx, booking.Pool{ID: "pair", Members: []string{"cal-a", "cal-b"}}))
	apiURL := f.serveAPI(app.EdgeConfig{})
	private := func(cal string, from, to time.Time) {
		f.calendar.Put(cal, &calendar.Event{Id: "private" + fmt.Sprint(from.Unix()), Summary: "private",
			Start: &calendar.EventDateTime{DateTime: from.Format(time.RFC3339)}, End: &calendar.EventDateTime{DateTime: to.Format(time.RFC3339)}})
	}
	body := func(start time.Time) api.BookingBody {
		return api.BookingBody{RequestKey: uuid.NewString(), ExpectedPolicyVersion: policyVersion, Slot: edge.Slot{PropertyID: "hall",
			AgentPool: "pair", StartsAt: start.Format(time.RFC3339), TimeZone: "Europe/Paris", DurationMinutes: 30}}
	}

	private("cal-a@calendar.test", slot(t, 10), slot(t, 11))
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", body(slot(t, 10)), &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	require.Equal(t, "cal-b", r.AgentRef, "cal-a has a private event then")

	private("cal-a@calendar.test", slot(t, 16), slot(t, 17))
	private("cal-b@calendar.test", slot(t, 16), slot(t, 17))
	q := url.Values{"property_id": {"hall"}, "agent_pool": {"pair"}, "from": {slot(t, 15).Format(time.RFC3339)}, "to": {slot(t, 18).Format(time.RFC3339)}}
	var av edge.AvailabilityAnswer
	require.Equal(t, http.StatusOK, f.call("GET", apiURL+"/v1/availability?"+q.Encode(), nil, &av))
	var offered []string
	for _, s := range av.Slots {
		offered = append(offered, s.LocalStart[len("2006-01-02T"):])
	}
	require.Equal(t, []string{"15:00", "15:30", "17:00", "17:30"}, offered)
	require.Equal(t, http.StatusOK, f.call("POST", apiURL+"/v1/bookings", body(slot(t, 16)), &r))
	require.Equal(t, receipt.StatusConflict, r.Status, "both members are busy in their calendars")
	require.NotEmpty(t, r.Alternatives, "a team's conflict offers other times")
}
