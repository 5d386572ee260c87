package devstack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// DemoPolicy is the demo catalogue's policy version.
const DemoPolicy = "demo-2026-11"

// DemoResources is a fictional catalogue: properties and agents on both
// sides of the Atlantic, a capacity-2 open-house loft, buffers, a key
// holder, calendars on the people and the flats, and working hours, a
// holiday, limits and a team.
func DemoResources() []booking.Resource {
	return []booking.Resource{
		{ID: "paris-marais-12", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", BufferBeforeMinutes: 15, BufferAfterMinutes: 15, CalendarID: "paris-marais-12@demo.bookingsaga", DisplayName: "the Marais flat",
			DisplayNames: map[string]string{"fr": "l'appartement du Marais", "zh": "玛黑区公寓"},
			Address:      "12 rue des Rosiers, 75004 Paris", Addresses: map[string]string{"zh": "巴黎罗西耶街12号"}},
		{ID: "paris-loft-3", Kind: "property", Capacity: 2, TimeZone: "Europe/Paris", DisplayName: "the loft on rue Oberkampf",
			DisplayNames: map[string]string{"fr": "le loft de la rue Oberkampf"}},
		// The New York agency keeps HubSpot (the dev stack's fake
		// account); Paris keeps the generic CRM, the default.
		{ID: "nyc-soho-7", Kind: "property", Capacity: 1, TimeZone: "America/New_York", BufferBeforeMinutes: 10, BufferAfterMinutes: 10, CalendarID: "nyc-soho-7@demo.bookingsaga", DisplayName: "the SoHo apartment, 7 Greene Street",
			CRM: "hubspot"},
		{ID: "agent-claire", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "claire@demo.bookingsaga", DisplayName: "Claire"},
		// Hugo's calendar is in Microsoft 365 (the fake tenant), the
		// others' in Google Calendar.
		{ID: "agent-hugo", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: HugoMailbox,
			CalendarProvider: booking.ProviderMicrosoft, DisplayName: "Hugo"},
		{ID: "agent-maya", Kind: "agent", Capacity: 1, TimeZone: "America/New_York", CalendarID: "maya@demo.bookingsaga", DisplayName: "Maya"},
		{ID: "keys-paris", Kind: "key_holder", Capacity: 1, TimeZone: "Europe/Paris"},
		// Scheduling as agencies run it: a flat open for visits at set
		// hours and closed on public holidays, agents with their own days
		// and a daily limit, and a team callers can book "whoever is free"
		// in (DemoPool).
		{ID: "paris-bastille-5", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", DisplayName: "the Bastille flat, 5 rue de Lappe", DisplayNames: map[string]string{"fr": "l'appartement de la Bastille, 5 rue de Lappe"},
			Rules: &booking.Rules{Hours: days([]string{"mon", "tue", "wed", "thu", "fri", "sat"}, "10:00", "13:00", "14:00", "19:00"),
				Overrides: []booking.DateHours{{Date: "2026-12-25", Closed: true}, {Date: "2027-01-01", Closed: true},
					{Date: "2026-12-24", Hours: []booking.OpenRange{{Opens: "10:00", Closes: "13:00"}}}}}},
		{ID: "agent-lea", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", DisplayName: "Léa",
			Rules: &booking.Rules{Hours: days([]string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "18:00"), DailyLimit: 6}},
		{ID: "agent-tom", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", DisplayName: "Tom",
			Rules: &booking.Rules{Hours: days([]string{"tue", "wed", "thu", "fri", "sat"}, "10:00", "19:00"), DailyLimit: 6}},
	}
}

// HugoMailbox is the demo agent whose calendar is in Microsoft 365.
const HugoMailbox = "hugo@demo-bookingsaga.onmicrosoft.com"

// DemoMailboxes are the fake Microsoft 365 tenant's mailboxes.
var DemoMailboxes = []string{HugoMailbox}

// DemoPool is the demo's team of Paris agents: book it as agent_pool and
// the commit chooses whoever is free.
var DemoPool = booking.Pool{ID: "paris-team", Members: []string{"agent-lea", "agent-tom", "agent-hugo"}}

// days is the same opening ranges (opens, closes, opens, closes, ...) on
// each of the days.
func days(names []string, ranges ...string) []booking.WeeklyHours {
	var out []booking.WeeklyHours
	for _, d := range names {
		for i := 0; i+1 < len(ranges); i += 2 {
			out = append(out, booking.WeeklyHours{Day: d, Opens: ranges[i], Closes: ranges[i+1]})
		}
	}
	return out
}

// SeedDemo writes what is missing of the demo catalogue. What an operator
// changed since (a resource, a newer policy) is left as it is.
func SeedDemo(ctx context.Context, st *store.Store) error {
	for _, r := range DemoResources() {
		_, err := st.Resource(ctx, r.ID)
		if refused(err, booking.CodeUnknownResource) {
			err = st.UpsertResource(ctx, r)
		}
		if err != nil {
			return fmt.Errorf("seed %s: %w", r.ID, err)
		}
	}
	_, err := st.Pool(ctx, DemoPool.ID)
	if refused(err, booking.CodeUnknownPool) {
		err = st.PutPool(ctx, DemoPool)
	}
	if err != nil {
		return fmt.Errorf("seed pool %s: %w", DemoPool.ID, err)
	}
	_, err = st.CurrentPolicy(ctx)
	if refused(err, booking.CodeNoCurrentPolicy) {
		err = st.SetPolicy(ctx, booking.Policy{Version: DemoPolicy, SlotMinutes: 30, OpensAt: 8 * time.Hour,
			ClosesAt: 20 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour, Reminder: 24 * time.Hour})
	}
	if err != nil {
		return fmt.Errorf("seed policy: %w", err)
	}
	if p, err := st.Profile(ctx); err != nil || p != (booking.Profile{}) {
		return err
	}
	if err := st.PutProfile(ctx, DemoProfile); err != nil {
		return fmt.Errorf("seed profile: %w", err)
	}
	return nil
}

// DemoProfile is the demo agency as its callers see it: the name their
// messages are signed with and the number they call back.
var DemoProfile = booking.Profile{Name: "Agence Lumière", Phone: "+33140000000"}

func refused(err error, code booking.Code) bool {
	var rej *booking.Rejection
	return errors.As(err, &rej) && rej.Code == code
}
