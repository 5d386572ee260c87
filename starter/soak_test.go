package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/devstack"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
)

// The soak looks for each booking's event in the calendar that holds it:
// Hugo's is in the fake Microsoft 365 tenant, the others' in the fake
// Google Calendar.
func TestTheSoakLooksInTheCalendarThatHoldsTheBooking(t *testing.T) {
	t.Parallel()
	google, graph := gcaltest.NewCalendar(), graphtest.NewGraph(graphtest.GraphApp{}, devstack.HugoMailbox)
	gsrv, msrv := httptest.NewServer(google), httptest.NewServer(graph)
	t.Cleanup(gsrv.Close)
	t.Cleanup(msrv.Close)
	s := &soak{calendar: gsrv.URL, graph: msrv.URL, http: http.DefaultClient}
	ctx := context.Background()

	// As the dev stack's catalogue has them (GET /v1/resources/{agent}).
	hugo := soakProperty{property: "paris-loft-3", agent: "agent-hugo", zone: "Europe/Paris",
		calendar: devstack.HugoMailbox, provider: booking.ProviderMicrosoft}
	claire := soakProperty{property: "paris-marais-12", agent: "agent-claire", zone: "Europe/Paris",
		calendar: "claire@demo.bookingsaga", provider: booking.ProviderGoogle}
	require.False(t, s.mirroredNow(ctx, hugo, "key-h"))
	graph.Put(devstack.HugoMailbox, graphtest.GraphEvent{Subject: "viewing", Properties: map[string]string{msgraph.RequestKeyProperty: "key-h"}})
	require.True(t, s.mirroredNow(ctx, hugo, "key-h"), "Hugo's event is in Microsoft 365")

	require.False(t, s.mirroredNow(ctx, claire, "key-c"))
	google.Put(claire.calendar, &calendar.Event{Id: gcal.EventID("key-c"), Summary: "viewing"})
	require.True(t, s.mirroredNow(ctx, claire, "key-c"), "Claire's is in Google Calendar")
	require.False(t, s.mirroredNow(ctx, hugo, "key-c"))
}
