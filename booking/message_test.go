package booking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

func TestQuietHoursEndOnTheWallClock(t *testing.T) {
	t.Parallel()
	paris, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	q := QuietHours{From: 21 * time.Hour, To: 8 * time.Hour}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, paris)
		require.NoError(t, err)
		return v
	}
	for now, want := range map[string]string{
		"2026-12-08 20:59": "",
		"2026-12-08 21:00": "2026-12-09 08:00",
		"2026-12-09 03:10": "2026-12-09 08:00",
		"2026-12-09 08:00": "",
		// The night clocks spring forward: 08:00 is still 08:00.
		"2027-03-27 23:30": "2027-03-28 08:00",
	} {
		until, quiet := q.Until(at(now), paris)
		if want == "" {
			require.False(t, quiet, now)
			continue
		}
		require.True(t, quiet, now)
		require.Equal(t, at(want), until.In(paris), now)
	}
	_, quiet := QuietHours{}.Until(at("2026-12-09 03:00"), paris)
	require.False(t, quiet, "equal bounds are no quiet hours")
}

// What the caller just asked for goes at once, at any hour; what they
// did not just trigger waits out the night, in the property's zone, to
// the morning's wall clock across the spring DST change.
func TestOnlyWhatCanWaitWaitsForTheMorning(t *testing.T) {
	t.Parallel()
	paris, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	q := QuietHours{From: 21 * time.Hour, To: 8 * time.Hour}
	now := time.Date(2027, 3, 27, 23, 30, 0, 0, paris) // the night the clocks spring forward
	morning := time.Date(2027, 3, 28, 8, 0, 0, 0, paris)
	for _, c := range []struct {
		kind MessageKind
		age  time.Duration
		wait bool
	}{
		{MessageConfirmed, time.Minute, false},
		{MessageRescheduled, JustAsked, false},
		{MessageCancelled, 2 * time.Minute, false},
		{MessageCode, time.Hour, false},
		{MessageConfirmed, JustAsked + time.Second, true}, // queued late, or retried
		{MessageReminder, 0, true},
		{MessageReassigned, 0, true},
	} {
		apply := c.kind.QuietHoursApply(now.Add(-c.age), now)
		require.Equal(t, c.wait, apply, "%s made %s ago", c.kind, c.age)
		if !apply {
			continue
		}
		until, quiet := q.Until(now, paris)
		require.True(t, quiet)
		require.Equal(t, morning, until.In(paris), "%s waits to 08:00 on the new clock", c.kind)
		require.Equal(t, 7*time.Hour+30*time.Minute, until.Sub(now), "an hour of the night is gone")
	}
}

func TestAChannelNeedsItsAddress(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "none", "sms"} {
		_, err := ParseChannel(s)
		require.NoError(t, err, s)
	}
	_, err := ParseChannel("fax")
	require.ErrorContains(t, err, "invalid_contact")
	require.NoError(t, Contact{Notify: ChannelSMS, Phone: "+33612345678"}.ValidateChannel())
	require.NoError(t, Contact{Phone: "06 12"}.ValidateChannel(), "no consent, no check")
	for _, phone := range []string{"", "0612345678", "+33 6 12 34 56 78", "+0612345678"} {
		require.ErrorContains(t, Contact{Notify: ChannelSMS, Phone: phone}.ValidateChannel(), "E.164", phone)
	}
	require.ErrorContains(t, Contact{Name: "Ada", KeepOnFile: true}.ValidateChannel(), "keep_on_file needs the caller's phone or email")
	require.NoError(t, Contact{Name: "Ada", Phone: "06 12 34 56 78", KeepOnFile: true}.ValidateChannel())
}
