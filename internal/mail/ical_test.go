package mail

import (
	"bytes"
	"strings"
	"testing"
	"time"

	ical "github.com/emersion/go-ical"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

func invite(t *testing.T) Invite {
	t.Helper()
	paris, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	start := time.Date(2026, 12, 8, 10, 0, 0, 0, paris)
	return Invite{UID: "bs-0001@bookingsaga", Sequence: 2, Start: start, End: start.Add(30 * time.Minute), Zone: "Europe/Paris",
		Summary: "Visite, l'appartement du Marais; 12 rue, Paris", Details: strings.Repeat("Référence BS-QBXW-J4EL. ", 8),
		Organizer: "agence@example.com", Attendee: "caller@example.org", Stamp: start.Add(-48 * time.Hour),
		Location: "12 rue des Rosiers, 75004 Paris; code 4B", OrganizerName: `Agence "Lumière", Paris`,
		URL: "https://book.example.com/a/lumiere/v/3q2-7wEAAAAAAAAAAAAAAA?lang=fr"}
}

// The invitation reads back, through an iCalendar parser of its own, as
// the viewing: one UID, its sequence, the local times in their zone, and
// the zone's rules around it.
func TestTheInvitationReadsBackAsTheViewing(t *testing.T) {
	t.Parallel()
	in := invite(t)
	ics, err := in.ICS()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSuffix(string(ics), "\r\n"), "\r\n") {
		require.LessOrEqual(t, len(line), 75, "folded at 75 octets: %q", line)
	}
	cal, err := ical.NewDecoder(bytes.NewReader(ics)).Decode()
	require.NoError(t, err)
	require.NoError(t, ical.NewEncoder(&bytes.Buffer{}).Encode(cal), "the parser's own checks pass")
	require.Equal(t, "REQUEST", cal.Props.Get(ical.PropMethod).Value)
	events := cal.Events()
	require.Len(t, events, 1)
	ev := events[0]
	require.Equal(t, in.UID, ev.Props.Get(ical.PropUID).Value)
	require.Equal(t, "2", ev.Props.Get(ical.PropSequence).Value)
	summary, err := ev.Props.Text(ical.PropSummary)
	require.NoError(t, err)
	require.Equal(t, in.Summary, summary, "escaped and read back")
	details, err := ev.Props.Text(ical.PropDescription)
	require.NoError(t, err)
	require.Equal(t, in.Details, details, "folded and read back")
	location, err := ev.Props.Text(ical.PropLocation)
	require.NoError(t, err)
	require.Equal(t, in.Location, location, "where the viewing is, escaped and read back")
	require.Equal(t, in.URL, ev.Props.Get(ical.PropURL).Value, "the caller's page")
	org := ev.Props.Get(ical.PropOrganizer)
	require.Equal(t, "mailto:agence@example.com", org.Value)
	require.Equal(t, "Agence Lumière, Paris", org.Params.Get(ical.ParamCommonName), "the agency by name, without the quotes a parameter can't hold")
	start := ev.Props.Get(ical.PropDateTimeStart)
	require.Equal(t, "Europe/Paris", start.Params.Get(ical.ParamTimezoneID))
	require.Equal(t, "20261208T100000", start.Value, "local time in its zone")
	got, err := ev.DateTimeStart(nil)
	require.NoError(t, err)
	require.True(t, got.Equal(in.Start))

	var tz *ical.Component
	for _, c := range cal.Children {
		if c.Name == ical.CompTimezone {
			tz = c
		}
	}
	require.NotNil(t, tz, "a VTIMEZONE for the TZID")
	var spring []string
	for _, o := range tz.Children {
		if o.Name == ical.CompTimezoneDaylight && o.Props.Get(ical.PropDateTimeStart).Value == "20260329T020000" {
			spring = []string{o.Props.Get(ical.PropTimezoneOffsetFrom).Value, o.Props.Get(ical.PropTimezoneOffsetTo).Value}
		}
	}
	require.Equal(t, []string{"+0100", "+0200"}, spring, "2026's spring change, at 02:00 local")
}

func TestACancellationCarriesTheUIDAndAHigherSequence(t *testing.T) {
	t.Parallel()
	in := invite(t)
	in.Cancel, in.Sequence = true, 3
	ics, err := in.ICS()
	require.NoError(t, err)
	cal, err := ical.NewDecoder(bytes.NewReader(ics)).Decode()
	require.NoError(t, err)
	require.Equal(t, "CANCEL", cal.Props.Get(ical.PropMethod).Value)
	ev := cal.Events()[0]
	require.Equal(t, "CANCELLED", ev.Props.Get(ical.PropStatus).Value)
	require.Equal(t, "3", ev.Props.Get(ical.PropSequence).Value)
	require.Equal(t, in.UID, ev.Props.Get(ical.PropUID).Value)
}

func TestAnInvitationNeedsAKnownZoneAndASpan(t *testing.T) {
	t.Parallel()
	in := invite(t)
	in.Zone = "Europe/Atlantis"
	_, err := in.ICS()
	require.Error(t, err)
	in = invite(t)
	in.End = in.Start
	_, err = in.ICS()
	require.ErrorContains(t, err, "start before the end")
}
