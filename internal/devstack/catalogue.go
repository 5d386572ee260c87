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
// holder, and calendars on the people and the flats.
func DemoResources() []booking.Resource {
	return []booking.Resource{
		{ID: "paris-marais-12", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", BufferBeforeMinutes: 15, BufferAfterMinutes: 15, CalendarID: "paris-marais-12@demo.bookingsaga", DisplayName: "the Marais flat, 12 rue des Rosiers"},
		{ID: "paris-loft-3", Kind: "property", Capacity: 2, TimeZone: "Europe/Paris", DisplayName: "the loft on rue Oberkampf"},
		{ID: "nyc-soho-7", Kind: "property", Capacity: 1, TimeZone: "America/New_York", BufferBeforeMinutes: 10, BufferAfterMinutes: 10, CalendarID: "nyc-soho-7@demo.bookingsaga", DisplayName: "the SoHo apartment, 7 Greene Street"},
		{ID: "agent-claire", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "claire@demo.bookingsaga", DisplayName: "Claire"},
		{ID: "agent-hugo", Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris", CalendarID: "hugo@demo.bookingsaga", DisplayName: "Hugo"},
		{ID: "agent-maya", Kind: "agent", Capacity: 1, TimeZone: "America/New_York", CalendarID: "maya@demo.bookingsaga", DisplayName: "Maya"},
		{ID: "keys-paris", Kind: "key_holder", Capacity: 1, TimeZone: "Europe/Paris"},
	}
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
	_, err := st.CurrentPolicy(ctx)
	if refused(err, booking.CodeNoCurrentPolicy) {
		err = st.SetPolicy(ctx, booking.Policy{Version: DemoPolicy, SlotMinutes: 30, OpensAt: 8 * time.Hour,
			ClosesAt: 20 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour})
	}
	if err != nil {
		return fmt.Errorf("seed policy: %w", err)
	}
	return nil
}

func refused(err error, code booking.Code) bool {
	var rej *booking.Rejection
	return errors.As(err, &rej) && rej.Code == code
}
