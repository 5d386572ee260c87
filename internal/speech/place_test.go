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

// A message a caller can act on is signed with the agency's name, names
// the agent, and says how to change it: the link to their page, else the
// agency's number, else "call us back"; a cancellation, how to book
// again. Each in the caller's language.
func TestAMessageNamesTheAgencyTheAgentAndHowToChangeIt(t *testing.T) {
	t.Parallel()
	b := booking.Booking{RequestKey: "k-1", Intent: booking.Intent{PropertyID: "p", AgentID: "a",
		StartsAt: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), TimeZone: "Europe/Paris"}}
	names := map[string]string{"p": "the Marais flat", "a": "Marie"}
	link := "https://book.example.com/v/abc"
	for lang, want := range map[Lang][]string{
		English: {"Agence Lumière: Your viewing of the Marais flat with Marie is confirmed", "To change or cancel it: " + link},
		French:  {"Agence Lumière : Votre visite de the Marais flat avec Marie est confirmée", "Pour la modifier ou l'annuler : " + link},
		Chinese: {"【Agence Lumière】您预约的the Marais flat看房（由Marie接待）已确认", "如需更改或取消：" + link},
	} {
		sp := Speaker{Lang: lang, Names: names, Agency: "Agence Lumière", Phone: "+33140000000", Link: link}
		msg := sp.Text(booking.MessageConfirmed, b)
		for _, w := range want {
			require.Contains(t, msg, w, lang)
		}
		require.NotContains(t, msg, "+33140000000", "the link says how; the number is on the page")
	}
	sp := Speaker{Lang: English, Names: map[string]string{"p": "the Marais flat"}, Phone: "+33140000000"}
	msg := sp.Message(booking.MessageConfirmed, b)
	require.Contains(t, msg, "Your viewing of the Marais flat is confirmed", "no agency, no sign; no agent's name, no 'with the agent'")
	require.Contains(t, msg, "call us on +33140000000 and quote the reference")
	require.Contains(t, sp.Message(booking.MessageCancelled, b), "Call us on +33140000000 to book another time.")
	require.Contains(t, Speaker{Lang: French}.Message(booking.MessageCancelled, b), "Rappelez-nous pour choisir un autre moment.")
}
