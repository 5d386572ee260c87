package systemtest

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// hubspotTour is the demo catalogue's New York agency, which keeps
// HubSpot, on the dev stack over MCP: a caller who agreed to be kept on
// file books (and the platform re-sends the call five times), moves and
// cancels. HubSpot holds one meeting per booking, each on the one
// contact, the first rescheduled and the second cancelled.
func (d *devStack) hubspotTour() {
	d.t.Helper()
	loc, err := localtime.LoadZone("America/New_York")
	require.NoError(d.t, err)
	at := func(hour int) string {
		day := time.Now().In(loc).AddDate(0, 0, 10)
		return time.Date(day.Year(), day.Month(), day.Day(), hour, 0, 0, 0, loc).Format("2006-01-02T15:04")
	}
	call := "call-hubspot-" + uuid.NewString()[:8]
	args := map[string]any{"property_id": "nyc-soho-7", "agent_id": "agent-maya", "time_zone": "America/New_York",
		"local_start": at(11), "duration_minutes": 30, "expected_policy_version": devstack.DemoPolicy,
		"contact": map[string]any{"name": "Riley Chen", "phone": "+12125550147", "email": "riley@example.com", "keep_on_file": true}}
	var key string
	for range 5 {
		r := d.tool(call, "book", args)
		require.Equal(d.t, "confirmed", r.Status, r.Line)
		require.True(d.t, key == "" || key == r.RequestKey, "one key for the resent calls")
		key = r.RequestKey
	}
	moved := d.tool(call, "reschedule_booking", map[string]any{"request_key": key, "local_start": at(15)})
	require.Equal(d.t, "confirmed", moved.Status, moved.Line)
	cancelled := d.tool(call, "cancel_booking", map[string]any{"request_key": moved.RequestKey})
	require.Equal(d.t, "cancelled", cancelled.Status, cancelled.Line)

	var people []hubspottest.Object
	outcomes := func() []string {
		var meetings []hubspottest.Object
		d.list("http://"+d.hubspot+"/_fake/meetings", &meetings)
		d.list("http://"+d.hubspot+"/_fake/contacts", &people)
		var o []string
		for _, m := range meetings {
			if m.Properties["bookingsaga_request_key"] == key || m.Properties["bookingsaga_request_key"] == moved.RequestKey {
				o = append(o, m.Properties["hs_meeting_outcome"]+" on "+strings.Join(m.Contacts, ","))
			}
		}
		slices.Sort(o)
		return o
	}
	require.Eventually(d.t, func() bool {
		o := outcomes()
		return len(people) == 1 && slices.Equal(o, []string{"CANCELED on " + people[0].ID, "RESCHEDULED on " + people[0].ID})
	}, 30*time.Second, 100*time.Millisecond, "one meeting per booking, on one contact")
	require.Equal(d.t, "riley@example.com", people[0].Properties["email"])
}
