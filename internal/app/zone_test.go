package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
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

// Availability, the receipt and the spoken line all follow the build's
// zone rules: 10:00 in Vancouver on 8 December 2026 is 17:00Z.
func TestVancouverInDecember2026FollowsTheBuildsRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.vancouver()
	url := f.serveAPI(api.Config{RetellKey: "retell-key"}) + "/v1/tools/retell/"
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
	free := tool("check_availability", with(map[string]any{"date": "2026-12-08"}))
	require.Contains(t, free, "2026-12-08T08:00", "the day opens at 08:00 local: %s", free)
	require.NotContains(t, free, "2026-12-08T07:00", "a day taken an hour early starts at 07:00: %s", free)

	line := tool("book", with(map[string]any{"local_start": "2026-12-08T10:00", "expected_policy_version": policyVersion}))
	require.True(t, strings.HasPrefix(line, "[confirmed]"), line)
	require.Contains(t, line, "Tuesday 8 December at 10 a.m., Vancouver time", line)
	var starts time.Time
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT starts_at FROM booking WHERE property_id = 'van-1'`).Scan(&starts))
	require.Equal(t, "2026-12-08T17:00:00Z", starts.UTC().Format(time.RFC3339))
}
