package systemtest

import (
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// vancouver puts a property and an agent in America/Vancouver, whose rules
// changed in tzdata 2026a: year-round UTC−7 from November 2026. This
// machine's host data (2025b) still has PST, UTC−8, in December.
func (f *fixture) vancouver() {
	f.t.Helper()
	for _, r := range []booking.Resource{
		{ID: "van-1", Kind: "property", Capacity: 1, TimeZone: "America/Vancouver", CalendarID: "van-1@calendar.test"},
		{ID: "agent-van", Kind: "agent", Capacity: 1, TimeZone: "America/Vancouver", CalendarID: "agent-van@calendar.test"},
	} {
		require.NoError(f.t, f.acts.Store.UpsertResource(f.ctx, r))
	}
}

// vancouverDay is a bookable day in Vancouver, two days on, inside the
// reconciliation window the tests run: on year-round UTC−7 since
// November 2026 (in December 2026 when run today).
func vancouverDay(t testing.TB) string {
	t.Helper()
	loc, err := localtime.LoadZone("America/Vancouver")
	require.NoError(t, err)
	return time.Now().In(loc).AddDate(0, 0, 2).Format(time.DateOnly)
}

// Availability, the receipt and the spoken line all follow the build's
// zone rules: 10:00 in Vancouver in December 2026 is 17:00Z.
func TestVancouverInDecember2026FollowsTheBuildsRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver()
	base := f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})
	url := base + "/v1/tools/retell/"
	call := "call-" + uuid.NewString()
	tool := func(name string, args map[string]any) string {
		body, err := json.Marshal(args)
		require.NoError(t, err)
		var out struct {
			Result string `json:"result"`
		}
		require.Equal(t, http.StatusOK, f.call("POST", url+name, body, &out, "X-Retell-Signature", retellSign(body, "retell-key"), "X-Call-Id", call))
		return out.Result
	}
	where := map[string]any{"property_id": "van-1", "agent_id": "agent-van", "time_zone": "America/Vancouver", "duration_minutes": 30}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range where {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	day := vancouverDay(t)
	free := tool("check_availability", with(map[string]any{"date": day}))
	require.Contains(t, free, day+"T08:00", "the day opens at 08:00 local: %s", free)
	require.NotContains(t, free, day+"T07:00", "a day taken an hour early starts at 07:00: %s", free)

	line := tool("book", with(map[string]any{"local_start": day + "T10:00", "expected_policy_version": policyVersion}))
	require.True(t, strings.HasPrefix(line, "[confirmed]"), line)
	require.Contains(t, line, "at 10 a.m., Vancouver time", line)
	var key string
	var starts time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT request_key, starts_at FROM booking WHERE property_id = 'van-1'`).Scan(&key, &starts))
	require.Equal(t, day+"T17:00:00Z", starts.UTC().Format(time.RFC3339))
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", base+"/v1/bookings/"+key, nil, &r))
	require.Equal(t, day+"T17:00:00Z", r.StartsAt.UTC().Format(time.RFC3339), "the receipt's starts_at")
	require.Equal(t, day+"T10:00", r.LocalStart)

	// The host's data, which TestMain points ZONEINFO at, says otherwise:
	// this test would pass on a host whose data agrees with the build's
	// without proving anything.
	hostLoc, err := time.LoadLocation("America/Vancouver")
	require.NoError(t, err)
	local, err := time.ParseInLocation("2006-01-02T15:04", day+"T10:00", hostLoc)
	require.NoError(t, err)
	require.Equal(t, day+"T18:00:00Z", local.UTC().Format(time.RFC3339), "ZONEINFO holds the old rule")
}

// bookedUnderOldRules books van-1 at 18:00Z on day through the saga and
// waits for its mirrors, then makes its record look as a build with
// tzdata 2025b wrote it: the caller was told 10:00, which those rules
// put at 18:00Z (UTC−8).
func (f *fixture) bookedUnderOldRules(day, agent string) string {
	f.t.Helper()
	key := uuid.NewString()
	start, err := time.Parse(time.RFC3339, day+"T18:00:00Z")
	require.NoError(f.t, err)
	req := booking.CommitRequest{ExpectedPolicyVersion: policyVersion, Intent: booking.Intent{PropertyID: "van-1", AgentID: agent,
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "America/Vancouver"}}
	require.Equal(f.t, receipt.StatusConfirmed, f.commit(key, req).Status)
	f.eventually(func() bool { return f.synced(key) }, "mirrored")
	tag, err := f.pool.Exec(f.ctx, `UPDATE booking SET local_start = $2, zone_rules = '2025b', zone_rules_checked = '2025b'
WHERE request_key = $1`, key, day+"T10:00")
	require.NoError(f.t, err)
	require.EqualValues(f.t, 1, tag.RowsAffected())
	return key
}

// A worker whose zone rules map a booking's promised local time to
// another instant moves it there: its calendar event follows, the event
// log and a webhook say so, its receipt gives the new instant, and a
// second run changes nothing.
func TestABookingFollowsNewZoneRulesWithItsMirrors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver()
	url := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	f.register(url, rc)
	day := vancouverDay(t)
	key := f.bookedUnderOldRules(day, "agent-van")
	eventStart := func(cal string) string {
		start, err := time.Parse(time.RFC3339, f.event(cal, key).Start.DateTime)
		require.NoError(t, err)
		return start.UTC().Format(time.RFC3339)
	}
	require.Equal(t, day+"T18:00:00Z", eventStart("van-1@calendar.test"))

	rep := f.reconcile()
	require.Equal(t, 1, rep.ZoneRules.Moved, rep.ZoneRules.Details)
	moved := day + "T17:00:00Z"
	for _, cal := range []string{"van-1@calendar.test", "agent-van@calendar.test"} {
		require.Equal(t, moved, eventStart(cal), "the event in %s follows", cal)
	}
	r := f.answer(url, key)
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	require.Equal(t, moved, r.StartsAt.UTC().Format(time.RFC3339), "the receipt is the store's")
	require.Equal(t, day+"T10:00", r.LocalStart)
	events, err := f.acts.Store.Events(f.ctx, key)
	require.NoError(t, err)
	require.Contains(t, kinds(events), "time_changed")
	f.eventually(func() bool { return rc.count("booking.time_changed") == 1 }, "booking.time_changed delivered")

	again := f.reconcile()
	require.Equal(t, booking.ZoneRulesReport{}, again.ZoneRules)
	require.Zero(t, again.Changed(), "a second run changes nothing")
}

// One that collides stays where it is, in ops attention with both instants.
func TestABookingThatCannotFollowNewZoneRulesIsInAttention(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver()
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "agent-van-2", Kind: "agent", Capacity: 1,
		TimeZone: "America/Vancouver", CalendarID: "agent-van-2@calendar.test"}))
	url := f.serveAPI(app.EdgeConfig{})
	day := vancouverDay(t)
	key := f.bookedUnderOldRules(day, "agent-van")
	start, err := time.Parse(time.RFC3339, day+"T17:00:00Z")
	require.NoError(t, err)
	other := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(other, booking.CommitRequest{ExpectedPolicyVersion: policyVersion,
		Intent: booking.Intent{PropertyID: "van-1", AgentID: "agent-van-2", StartsAt: start, EndsAt: start.Add(30 * time.Minute),
			TimeZone: "America/Vancouver"}}).Status)

	rep := f.reconcile()
	require.Equal(t, 1, rep.ZoneRules.Flagged, rep.ZoneRules.Details)
	require.Zero(t, rep.ZoneRules.Moved)
	var a api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	var detail string
	for _, fl := range a.Flags {
		if fl.RequestKey == key && fl.Kind == "zone_rules_changed" {
			detail = fl.Detail
		}
	}
	require.Contains(t, detail, day+"T18:00:00Z")
	require.Contains(t, detail, day+"T17:00:00Z")
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key, nil, &r))
	require.Equal(t, day+"T18:00:00Z", r.StartsAt.UTC().Format(time.RFC3339), "the receipt stays the store's truth")
	require.Equal(t, booking.ZoneRulesReport{}, f.reconcile().ZoneRules, "a second run changes nothing")
}

func kinds(events []booking.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

// Availability names the zone rules its instants were resolved under; a
// booking that passes back another release is refused as a stale offer.
func TestAnOfferUnderOtherZoneRulesIsRefusedThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.serveAPI(app.EdgeConfig{})
	start := slot(t, 10)
	var av edge.AvailabilityAnswer
	q := "?property_id=paris-11&agent_id=agent-00&from=" + start.Format(time.RFC3339) + "&to=" + start.Add(time.Hour).Format(time.RFC3339)
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/availability"+q, nil, &av))
	require.Equal(t, localtime.Version(), av.ZoneRules)

	stale := bookingBody(uuid.NewString(), start)
	stale.ExpectedZoneRules = "2025b"
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", stale, &r))
	require.Equal(t, receipt.StatusRejected, r.Status)
	require.Equal(t, string(booking.CodeZoneRulesChanged), r.Reason.Code, r.Reason.Message)

	fresh := bookingBody(uuid.NewString(), start)
	fresh.ExpectedZoneRules = av.ZoneRules
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", fresh, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
}

// An API whose zone rules differ from the workers' (a rolling deploy) is
// told and shows it: the ops readiness names the release of the newest
// booking the workers committed beside its own, and says they differ.
func TestAZoneRulesSkewIsShownToOperators(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, f.commit(key, commitRequest(slot(t, 10))).Status)
	_, err := f.pool.Exec(f.ctx, "UPDATE booking SET zone_rules = '2025b' WHERE request_key = $1", key)
	require.NoError(t, err)
	url := f.serveAPI(app.EdgeConfig{})
	var r health.Readiness
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/readiness", nil, &r))
	require.Equal(t, localtime.Version(), r.ZoneRules)
	require.Equal(t, "2025b", r.StoreZoneRules, "the workers' release, from their newest booking")
	require.True(t, r.ZoneRulesSkew)
}
