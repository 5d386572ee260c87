package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

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

// mailbox is an agent's Microsoft 365 mailbox.
func mailbox(agent string) string { return agent + "@chaos.test" }

// hubspotProperty is the property whose agency keeps HubSpot; the
// others' viewings go to the generic CRM.
const hubspotProperty = "flat-3"

func crmOf(flat int) string {
	if fmt.Sprintf("flat-%d", flat) == hubspotProperty {
		return "hubspot"
	}
	return ""
}

func resources() []booking.Resource {
	rs := []booking.Resource{
		{ID: "open-house", Kind: "property", Capacity: 2, TimeZone: zone, CalendarID: "open-house@chaos.test"},
		{ID: "keys-1", Kind: "key_holder", Capacity: 1, TimeZone: zone},
	}
	for i := 1; i <= 3; i++ {
		rs = append(rs, booking.Resource{ID: fmt.Sprintf("flat-%d", i), Kind: "property", Capacity: 1, TimeZone: zone,
			CalendarID: fmt.Sprintf("flat-%d@chaos.test", i), CRM: crmOf(i)})
		rs = append(rs, booking.Resource{ID: fmt.Sprintf("agent-%d", i), Kind: "agent", Capacity: 1, TimeZone: zone,
			CalendarID: mailbox(fmt.Sprintf("agent-%d", i)), CalendarProvider: booking.ProviderMicrosoft})
	}
	return rs
}

// seed writes the policy and the resources; days says over how many days
// the slots spread (more for a longer run, so that cancels keep room).
func seed(ctx context.Context, st *store.Store, days int) (catalogue, error) {
	if err := st.SetPolicy(ctx, booking.Policy{Version: policyVersion, SlotMinutes: 30, OpensAt: 9 * time.Hour,
		ClosesAt: 18 * time.Hour, HoldTTL: 10 * time.Second}); err != nil {
		return catalogue{}, err
	}
	var cat catalogue
	for _, r := range resources() {
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

// pick is a random slot; a third need the key holder too.
func (c catalogue) pick(rng *rand.Rand) edge.Slot {
	s := edge.Slot{PropertyID: c.properties[rng.IntN(len(c.properties))], AgentID: c.agents[rng.IntN(len(c.agents))],
		StartsAt: c.starts[rng.IntN(len(c.starts))].Format(time.RFC3339), TimeZone: zone, DurationMinutes: 30}
	if rng.IntN(3) == 0 {
		s.ExtraResources = []string{"keys-1"}
	}
	return s
}
