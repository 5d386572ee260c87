package edge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func slot() Slot {
	return Slot{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: "2026-12-08T10:00:00+01:00", TimeZone: "Europe/Paris", DurationMinutes: 30}
}

func TestSlotResolvesOrRefusesWithACode(t *testing.T) {
	t.Parallel()
	in, e := slot().Intent(now)
	require.Nil(t, e)
	require.Equal(t, time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), in.StartsAt)
	require.Equal(t, 30*time.Minute, in.EndsAt.Sub(in.StartsAt))

	cases := map[string]struct {
		edit func(*Slot)
		code string
	}{
		"no property":    {func(s *Slot) { s.PropertyID = "" }, "missing_field"},
		"both starts":    {func(s *Slot) { s.LocalStart = "2026-12-08T10:00" }, "missing_field"},
		"no zone":        {func(s *Slot) { s.TimeZone = "" }, "missing_field"},
		"unknown zone":   {func(s *Slot) { s.TimeZone = "Mars/Olympus" }, "unknown_time_zone"},
		"no offset":      {func(s *Slot) { s.StartsAt = "2026-12-08T10:00:00" }, "invalid_time"},
		"end before":     {func(s *Slot) { s.DurationMinutes, s.EndsAt = 0, "2026-12-08T09:00:00+01:00" }, "invalid_time_range"},
		"past":           {func(s *Slot) { s.StartsAt = "2026-11-30T10:00:00+01:00" }, "starts_in_past"},
		"zone mismatch":  {func(s *Slot) { s.TimeZone = "America/New_York" }, ""},
		"same resource":  {func(s *Slot) { s.AgentID = "paris-11" }, "duplicate_resource"},
		"bad local form": {func(s *Slot) { s.StartsAt, s.LocalStart = "", "8 Dec 10am" }, "invalid_time"},
	}
	for name, c := range cases {
		s := slot()
		c.edit(&s)
		_, e := s.Intent(now)
		if c.code == "" {
			require.Nil(t, e, name) // the store checks the zone against the property
			continue
		}
		require.NotNil(t, e, name)
		require.Equal(t, c.code, e.Code, name)
		require.Equal(t, 400, e.Status, name)
	}
}

func TestLocalTimesInDSTChangesAreNotGuessed(t *testing.T) {
	t.Parallel()
	gap := Slot{PropertyID: "p", AgentID: "a", LocalStart: "2027-03-28T02:30", TimeZone: "Europe/Paris", DurationMinutes: 30}
	_, e := gap.Intent(now)
	require.Equal(t, "nonexistent_local_time", e.Code)
	require.Len(t, e.Candidates, 2)
	twice := Slot{PropertyID: "p", AgentID: "a", LocalStart: "2027-11-07T01:30", TimeZone: "America/New_York", DurationMinutes: 30}
	_, e = twice.Intent(now)
	require.Equal(t, "ambiguous_local_time", e.Code)
	require.Equal(t, time.Hour, e.Candidates[1].Sub(e.Candidates[0]))
}
