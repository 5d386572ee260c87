package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The demo catalogue's New York agency keeps HubSpot.
const (
	hubspotProperty = "nyc-soho-7"
	hubspotAgent    = "agent-maya"
	hubspotZone     = "America/New_York"
)

// hubspotMeeting is a meeting as the fake account's GET /_fake/meetings
// lists it.
type hubspotMeeting struct {
	ID         string
	Properties map[string]string
	Contacts   []string
}

// hubspotViewings books the New York flat for a caller who agreed to be
// kept on file (five duplicates at once, as a platform resending a slow
// call), moves and cancels it, then shows what the HubSpot account holds:
// one meeting per booking, each on the caller's one contact.
func (d *demo) hubspotViewings(ctx context.Context) error {
	loc, err := localtime.LoadZone(hubspotZone)
	if err != nil {
		return err
	}
	at := func(hour int) string {
		return time.Date(d.day.Year(), d.day.Month(), d.day.Day(), hour, 0, 0, 0, loc).Format(time.RFC3339)
	}
	key, newKey := uuid.NewString(), uuid.NewString()
	body := map[string]any{"request_key": key, "property_id": hubspotProperty, "agent_id": hubspotAgent, "starts_at": at(11),
		"time_zone": hubspotZone, "duration_minutes": 30, "expected_policy_version": demoPolicy,
		"contact": map[string]any{"name": "Riley Chen", "phone": "+12125550147", "email": "riley@example.com", "keep_on_file": true}}
	got, errs := make([]receipt.Receipt, 5), make([]error, 5)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { errs[i] = d.post(ctx, "/v1/bookings", body, &got[i]) })
	}
	wg.Wait()
	for i, r := range got {
		if errs[i] != nil {
			return errs[i]
		}
		d.row(fmt.Sprintf("kept on file, book %d/5", i+1), r)
	}
	var r receipt.Receipt
	if err := d.post(ctx, "/v1/bookings/"+key+"/reschedule", map[string]any{"new_request_key": newKey, "property_id": hubspotProperty,
		"agent_id": hubspotAgent, "starts_at": at(15), "time_zone": hubspotZone, "duration_minutes": 30,
		"expected_policy_version": demoPolicy}, &r); err != nil {
		return err
	}
	d.row("reschedule 11:00 → 15:00 (New York)", r)
	if err := d.post(ctx, "/v1/bookings/"+newKey+"/cancel", nil, &r); err != nil {
		return err
	}
	d.row("cancel", r)
	d.table("HubSpot agency", "request_key", "status", "booking_id / detail")
	return d.hubspotAfterwards(ctx, key, newKey)
}

// hubspotAfterwards shows the two bookings' meetings once both carry
// their last outcome (or after 15 s, whatever they carry then).
func (d *demo) hubspotAfterwards(ctx context.Context, keys ...string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		var all []hubspotMeeting
		if err := d.send(ctx, "GET", d.hubspot+"/_fake/meetings", nil, &all); err != nil {
			return fmt.Errorf("read the fake HubSpot account (is it running?): %w", err)
		}
		rows := make([][]string, 0, len(keys))
		for _, m := range all {
			if k := m.Properties["bookingsaga_request_key"]; slices.Contains(keys, k) {
				rows = append(rows, []string{short(k), m.Properties["hs_meeting_outcome"], m.Properties["hs_meeting_start_time"],
					strings.Join(m.Contacts, ",")})
			}
		}
		slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[2], b[2]) })
		if settled(rows) || time.Now().After(deadline) {
			d.rows = rows
			d.table("request_key", "HubSpot meeting", "starts (UTC)", "on contact")
			return nil
		}
		time.Sleep(200 * time.Millisecond) // polling another process for display, not synchronisation under test
	}
}

// settled: the moved booking's meeting says RESCHEDULED and the
// cancelled one's CANCELED, both on one contact.
func settled(rows [][]string) bool {
	return len(rows) == 2 && rows[0][1] == "RESCHEDULED" && rows[1][1] == "CANCELED" && rows[0][3] != "" && rows[0][3] == rows[1][3]
}
