package systemtest

import (
	"bytes"
	"encoding/json"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/api/staff"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// laterClock is the store's clock, moved on by a test past a viewing's
// start without waiting for it.
type laterClock struct{ ahead atomic.Int64 }

func (c *laterClock) now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *laterClock) past(t time.Time) { c.ahead.Store(int64(time.Until(t) + 5*time.Minute)) }

// setupOutcomes is a fixture whose worker's store runs on clock and whose
// activities count into the returned scope.
func setupOutcomes(t *testing.T) (*fixture, *laterClock, tally.TestScope) {
	t.Helper()
	clock, scope := &laterClock{}, tally.NewTestScope("", nil)
	f := sendingWorker(t, func(f *fixture) {
		f.acts.Store = store.New(f.pool, store.Config{Now: clock.now})
		f.acts.Metrics = scope
	})
	return f, clock, scope
}

// staff record a no-show through the admin route once the viewing has
// started: the CRM's record, the webhooks and the metric follow, once
// however often it is sent; an agent key may not, bad input writes
// nothing, and an outcome too early is refused.
func TestAnOutcomeReachesTheCRMTheWebhooksAndTheMetric(t *testing.T) {
	t.Parallel()
	f, clock, scope := setupOutcomes(t)
	url := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	f.register(url, rc)
	key, start := uuid.NewString(), slot(t, 10)
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", bookingBody(key, start), &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	f.eventually(func() bool { return f.synced(key) }, "the booking mirrored")
	route := url + "/v1/bookings/" + key + "/outcome"

	var e edge.Error
	agent, keys := agentKey(t, "agent-only")
	require.Equal(t, http.StatusForbidden, f.call("POST", f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: keys}})+"/v1/bookings/"+key+"/outcome",
		staff.OutcomeBody{Outcome: booking.OutcomeNoShow}, &e, "Authorization", "Bearer "+agent))
	require.Equal(t, http.StatusBadRequest, f.call("POST", route, staff.OutcomeBody{Outcome: "late"}, &e))
	require.Equal(t, string(booking.CodeInvalidOutcome), e.Code)
	require.Equal(t, http.StatusConflict, f.call("POST", route, staff.OutcomeBody{Outcome: booking.OutcomeNoShow}, &e))
	require.Equal(t, string(booking.CodeOutcomeNotAllowed), e.Code, "the viewing is still to come")

	clock.past(start)
	for i, changed := range []bool{true, false} {
		var out staff.OutcomeAnswer
		require.Equal(t, http.StatusOK, f.call("POST", route, staff.OutcomeBody{Outcome: booking.OutcomeNoShow, Note: "waited 20 minutes"}, &out))
		require.Equal(t, staff.OutcomeAnswer{RequestKey: key, Outcome: booking.OutcomeNoShow, Changed: changed}, out, "call %d", i)
	}
	f.eventually(func() bool {
		for _, rec := range f.crm.Records() {
			if rec.RequestKey == key {
				return rec.Outcome == string(booking.OutcomeNoShow)
			}
		}
		return false
	}, "the CRM's record has the outcome")
	f.eventually(func() bool { return rc.count("booking.outcome") == 1 }, "one booking.outcome webhook")
	counters := scope.Snapshot().Counters()
	c := counters["viewing_outcomes_total+agency=default,agent=agent-00,outcome=no_show,property=paris-11,reconfirmed=false,reminded=false"]
	require.NotNil(t, c, "the no-show is counted by property and agent: %v", counters)
	require.EqualValues(t, 1, c.Value(), "counted once")
	f.record(booking.OutcomeIDPrefix+key+":"+string(booking.OutcomeNoShow), "outcome_no_show")
	mirror := booking.OutcomeIDPrefix + "crm:" + key + ":" + string(booking.OutcomeNoShow)
	require.NoError(t, f.client.GetWorkflow(f.ctx, mirror, "").Get(f.ctx, nil), "the CRM's mirror of the outcome ends")
	f.record(mirror, "mirror_crm_outcome")
}

// An agent's time off over a booking shows in attention with the team
// free then; staff move it to one of them through the admin route: the
// new booking first, the old released, the caller texted once, however
// often the move is sent.
func TestAReassignmentMovesTheBookingAndTellsTheCaller(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "agent-01", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	require.NoError(t, f.acts.Store.PutPool(f.ctx, booking.Pool{ID: "paris", Members: []string{"agent-00", "agent-01"}}))
	url := f.serveAPI(app.EdgeConfig{})
	rc := &receiver{t: t, got: map[string]int{}, types: map[string]string{}}
	f.register(url, rc)
	key, start := uuid.NewString(), slot(t, 10)
	body := bookingBody(key, start)
	body.Contact = &edge.Contact{Name: "Camille", Phone: "+33612345678", Notify: "sms", Language: "en"}
	var r receipt.Receipt
	require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r))
	require.Equal(t, receipt.StatusConfirmed, r.Status)
	f.eventually(func() bool { return len(fake.Sent()) == 1 }, "the confirmation texted")

	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "agent-00", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris",
		Rules: &booking.Rules{TimeOff: []booking.Span{{Start: start.Add(-time.Hour), End: start.Add(2 * time.Hour)}}}}))
	var a api.AttentionAnswer
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Len(t, a.OutsideRules, 1)
	require.Equal(t, key, a.OutsideRules[0].RequestKey)
	require.Equal(t, []string{"agent-01"}, a.OutsideRules[0].FreeAgents)

	var e edge.Error
	route := url + "/v1/bookings/" + key + "/reassign"
	require.Equal(t, http.StatusBadRequest, f.call("POST", route, staff.ReassignBody{AgentID: "agent-00"}, &e))
	require.Equal(t, string(booking.CodeInvalidReplacement), e.Code, "already agent-00's")
	for range 2 {
		var moved receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", route, staff.ReassignBody{AgentID: "agent-01"}, &moved))
		require.Equal(t, receipt.StatusConfirmed, moved.Status)
		require.Equal(t, desk.ReassignKey(key, "agent-01"), moved.RequestKey)
		require.Equal(t, key, moved.Replaces)
		b, err := f.acts.Store.Lookup(f.ctx, moved.RequestKey)
		require.NoError(t, err)
		require.Equal(t, "agent-01", b.Intent.AgentID)
		require.True(t, start.Equal(b.Intent.StartsAt), "the same time")
	}
	old, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, booking.StatusReleasedForReschedule, old.Status)
	f.eventually(func() bool { return len(fake.Sent()) == 2 }, "the move texted")
	f.eventually(func() bool { return rc.count("booking.moved") == 1 }, "one booking.moved webhook")
	f.eventually(func() bool {
		recs := map[string]crm.Record{}
		for _, rec := range f.crm.Records() {
			recs[rec.RequestKey] = rec
		}
		return recs[key].Status == crm.StatusRescheduled && recs[desk.ReassignKey(key, "agent-01")].AgentRef == "agent-01"
	}, "the CRM has the old viewing moved and the new one with agent-01")
	// A reassignment changes the agent, not the time (F3): the caller's
	// reference, read in any language, and their text say so.
	require.True(t, strings.HasPrefix(fake.Sent()[1].Body, "Your viewing of the property is now with the agent, at the same time: "), fake.Sent()[1].Body)
	require.NotContains(t, fake.Sent()[1].Body, "moved")
	for lang, line := range map[string]string{"en": "Same time, same property, now with the agent: the viewing on ",
		"fr": "Même heure, même bien, désormais avec l'agent : la visite du ", "zh": "时间和房源不变，现改由经纪人接待："} {
		var now receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+key+"?language="+lang, nil, &now))
		require.Equal(t, receipt.StatusReassigned, now.Status)
		require.Equal(t, "agent-01", now.AgentRef)
		require.Equal(t, desk.ReassignKey(key, "agent-01"), now.ReplacedBy)
		require.True(t, start.Equal(*now.StartsAt))
		require.True(t, strings.HasPrefix(now.Spoken, line), "%s: %s", lang, now.Spoken)
	}
	require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/ops/attention", nil, &a))
	require.Empty(t, a.OutsideRules, "the booking outside its agent's rules is gone")
	require.Equal(t, http.StatusConflict, f.call("POST", route, staff.ReassignBody{AgentID: "agent-02"}, &e))
	require.Equal(t, string(booking.CodeWrongState), e.Code, "moved already")
	require.Len(t, fake.Sent(), 2, "texted once")
}

// staffByCLI is the operator's side of a booking from the CLI, on the
// demo catalogue: a booking reassigned from Claire to Hugo, then cancelled
// and its outcome recorded as the agency's cancellation.
func (d *devStack) staffByCLI(day time.Time) {
	d.t.Helper()
	key := uuid.NewString()
	start := time.Date(day.Year(), day.Month(), day.Day(), 16, 0, 0, 0, day.Location())
	require.Equal(d.t, receipt.StatusConfirmed, d.book(key, start).Status)
	var moved receipt.Receipt
	d.cliJSON(&moved, "ops", "reassign", key, "agent-hugo", "-json")
	require.Equal(d.t, receipt.StatusConfirmed, moved.Status)
	require.Equal(d.t, key, moved.Replaces)
	require.Equal(d.t, receipt.StatusReassigned, d.receipt(key).Status, "the old booking released, its viewing with Hugo")
	res, err := d.post("/v1/bookings/"+moved.RequestKey+"/cancel", nil)
	require.NoError(d.t, err)
	require.Equal(d.t, receipt.StatusCancelled, decodeReceipt(d.t, res).Status)
	var out booking.OutcomeOutput
	d.cliJSON(&out, "ops", "outcome", moved.RequestKey, "cancelled_by_agency", "-note", "Hugo was off sick", "-json")
	require.True(d.t, out.Changed)
	require.Equal(d.t, booking.OutcomeCancelledByAgency, out.Booking.Outcome)
	require.Equal(d.t, "agent-hugo", out.Booking.Intent.AgentID)
}

// cliJSON runs the starter CLI against the stack and decodes what it
// prints into v.
func (d *devStack) cliJSON(v any, args ...string) {
	d.t.Helper()
	cmd := exec.Command("go", append([]string{"run", "./starter", "-temporal-address", d.frontal, "-database-url", d.dbURL,
		"-payload-keys", filepath.Join(d.dataDir, "payload-keys.json")}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(d.t, err, "starter %v: %s", args, &stderr)
	require.NoError(d.t, json.Unmarshal(out, v), "%s", out)
}
