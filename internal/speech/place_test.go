package speech

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A caller's message says where the viewing is, after the property's
// name, in the language's own brackets; without an address it says the
// name alone, with no empty brackets.
func TestAMessageSaysWhereTheViewingIs(t *testing.T) {
	t.Parallel()
	b := booking.Booking{RequestKey: "k-1", Intent: booking.Intent{PropertyID: "p", AgentID: "a",
		StartsAt: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), TimeZone: "Europe/Paris"}}
	names := map[string]string{"p": "the Marais flat"}
	for lang, want := range map[Lang]string{English: "the Marais flat (12 rue des Rosiers) is confirmed", French: "the Marais flat (12 rue des Rosiers) est confirmée",
		Chinese: "the Marais flat（12 rue des Rosiers）看房已确认"} {
		sp := Speaker{Lang: lang, Names: names, Address: "12 rue des Rosiers"}
		require.Contains(t, sp.Message(booking.MessageConfirmed, b), want, lang)
		require.Contains(t, sp.Text(booking.MessageReminder, b), "12 rue des Rosiers", lang)
	}
	plain := Speaker{Lang: English, Names: names}.Message(booking.MessageConfirmed, b)
	require.Contains(t, plain, "the Marais flat is confirmed")
	require.NotContains(t, plain, "()")
}
