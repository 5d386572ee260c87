package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

const (
	policyVersion = "chaos-policy-1"
	zone          = "Europe/Paris"
)

// catalogue is what callers compete for: few enough slots that they
// collide, three properties of capacity 1 and an open house of capacity
// 2, three agents, and a key holder that some viewings need as well. The
// properties' calendars are in Google's fake, the agents' in the fake
// Microsoft 365 tenant, so a booking writes to both.

type catalogue struct {
	properties, agents []string
	starts             []time.Time
}

// secondAgency is the agency beside the default one when
// Options.SecondAgency: its catalogue has the same resource ids, in
// calendars and mailboxes of its own, in accounts of its own (fakes), and
// its viewings all go to its HubSpot (the default agency keeps HubSpot
// for hubspotProperty, the generic CRM for the others).
const secondAgency = "lyon"

// domain is the calendars' domain of an agency.
func domain(agencyID string) string {
	if agencyID == secondAgency {
		return "lyon.chaos.test"
	}
	return "chaos.test"
}

// mailbox is an agency's agent's Microsoft 365 mailbox.
func mailbox(agencyID, agent string) string { return agent + "@" + domain(agencyID) }

// calendarOf is an agency's property's Google calendar.
func calendarOf(agencyID, property string) string { return property + "@" + domain(agencyID) }

// hubspotProperty is the property whose agency keeps HubSpot; the
// others' viewings go to the generic CRM.
const hubspotProperty = "flat-3"

func crmOf(agencyID string, flat int) string {
	if agencyID == agency.Default.ID && fmt.Sprintf("flat-%d", flat) == hubspotProperty {
		return "hubspot"
	}
	return ""
}

// resources are an agency's catalogue.
func resources(agencyID string) []booking.Resource {
	rs := []booking.Resource{
		{ID: "open-house", Kind: "property", Capacity: 2, TimeZone: zone, CalendarID: calendarOf(agencyID, "open-house")},
		{ID: "keys-1", Kind: "key_holder", Capacity: 1, TimeZone: zone},
	}
	for i := 1; i <= 3; i++ {
		flat, agent := fmt.Sprintf("flat-%d", i), fmt.Sprintf("agent-%d", i)
		rs = append(rs, booking.Resource{ID: flat, Kind: "property", Capacity: 1, TimeZone: zone,
			CalendarID: calendarOf(agencyID, flat), CRM: crmOf(agencyID, i)})
		rs = append(rs, booking.Resource{ID: agent, Kind: "agent", Capacity: 1, TimeZone: zone,
			CalendarID: mailbox(agencyID, agent), CalendarProvider: booking.ProviderMicrosoft})
	}
	return rs
}

// seed writes the policy and the resources of the agency ctx acts for;
// days says over how many days the slots spread (more for a longer run,
// so that cancels keep room).
func seed(ctx context.Context, st *store.Store, days int) (catalogue, error) {
	if err := st.SetPolicy(ctx, booking.Policy{Version: policyVersion, SlotMinutes: 30, OpensAt: 9 * time.Hour,
		ClosesAt: 18 * time.Hour, HoldTTL: 10 * time.Second}); err != nil {
		return catalogue{}, err
	}
	var cat catalogue
	for _, r := range resources(agency.From(ctx).ID) {
		if err := st.UpsertResource(ctx, r); err != nil {
			return catalogue{}, err
		}
		switch r.Kind {
		case "property":
			cat.properties = append(cat.properties, r.ID)
		case "agent":
			cat.agents = append(cat.agents, r.ID)
		}
	}
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		return catalogue{}, err
	}
	first := time.Now().In(loc).AddDate(0, 0, 3)
	for d := range days {
		day := first.AddDate(0, 0, d)
		for h := 9; h < 17; h++ {
			cat.starts = append(cat.starts, time.Date(day.Year(), day.Month(), day.Day(), h, 0, 0, 0, loc))
		}
	}
	return cat, nil
}

// seedSecond makes the second agency, seeds its catalogue, which names
// the same ids and starts as the default agency's, and sets its accounts
// at its own fakes.
func seedSecond(ctx context.Context, st *store.Store, days int, own *fakes) error {
	a, _, err := st.PutAgency(ctx, secondAgency, "Lyon")
	if err != nil {
		return fmt.Errorf("make agency %s: %w", secondAgency, err)
	}
	ctx = agency.With(ctx, a)
	if _, err = seed(ctx, st, days); err != nil {
		return err
	}
	return own.setAccounts(ctx, st)
}

// pick is a random slot; a third need the key holder too.
func (c catalogue) pick(rng *rand.Rand) edge.Slot {
	s := edge.Slot{PropertyID: c.properties[rng.IntN(len(c.properties))], AgentID: c.agents[rng.IntN(len(c.agents))],
		StartsAt: c.starts[rng.IntN(len(c.starts))].Format(time.RFC3339), TimeZone: zone, DurationMinutes: 30}
	if rng.IntN(3) == 0 {
		s.ExtraResources = []string{"keys-1"}
	}
	return s
}
