package localtime

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, local, zone string
		want              string // RFC 3339, when the time resolves
		gap, overlap      bool
		earlier, later    string
	}{
		{name: "paris ordinary winter", local: "2026-11-07T10:30", zone: "Europe/Paris", want: "2026-11-07T10:30:00+01:00"},
		{name: "paris ordinary summer", local: "2026-07-07T10:30", zone: "Europe/Paris", want: "2026-07-07T10:30:00+02:00"},
		{name: "paris spring forward", local: "2026-03-29T02:30", zone: "Europe/Paris", gap: true,
			earlier: "2026-03-29T01:30:00+01:00", later: "2026-03-29T03:30:00+02:00"},
		{name: "paris fall back", local: "2026-10-25T02:30", zone: "Europe/Paris", overlap: true,
			earlier: "2026-10-25T02:30:00+02:00", later: "2026-10-25T02:30:00+01:00"},
		{name: "paris just before gap", local: "2026-03-29T01:59", zone: "Europe/Paris", want: "2026-03-29T01:59:00+01:00"},
		{name: "paris first minute after gap", local: "2026-03-29T03:00", zone: "Europe/Paris", want: "2026-03-29T03:00:00+02:00"},
		{name: "new york spring forward", local: "2026-03-08T02:15", zone: "America/New_York", gap: true,
			earlier: "2026-03-08T01:15:00-05:00", later: "2026-03-08T03:15:00-04:00"},
		{name: "new york fall back", local: "2026-11-01T01:30", zone: "America/New_York", overlap: true,
			earlier: "2026-11-01T01:30:00-04:00", later: "2026-11-01T01:30:00-05:00"},
		{name: "new york after fall back", local: "2026-11-01T02:00", zone: "America/New_York", want: "2026-11-01T02:00:00-05:00"},
		{name: "utc", local: "2026-03-29T02:30", zone: "UTC", want: "2026-03-29T02:30:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.local, tc.zone)
			var gap *NonexistentError
			var overlap *AmbiguousError
			switch {
			case tc.gap:
				require.ErrorAs(t, err, &gap)
				require.Equal(t, tc.earlier, gap.Earlier.Format(time.RFC3339))
				require.Equal(t, tc.later, gap.Later.Format(time.RFC3339))
			case tc.overlap:
				require.ErrorAs(t, err, &overlap)
				require.Equal(t, tc.earlier, overlap.Earlier.Format(time.RFC3339))
				require.Equal(t, tc.later, overlap.Later.Format(time.RFC3339))
				require.Equal(t, time.Hour, overlap.Later.Sub(overlap.Earlier))
			default:
				require.NoError(t, err)
				require.Equal(t, tc.want, got.Format(time.RFC3339))
			}
		})
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	t.Parallel()
	_, err := Parse("2026-11-07T10:30", "Europe/Atlantis")
	require.ErrorIs(t, err, ErrUnknownZone)
	_, err = Parse("2026-11-07T10:30", "")
	require.ErrorIs(t, err, ErrUnknownZone)
	_, err = Parse("2026-11-07T10:30", "Local")
	require.ErrorIs(t, err, ErrUnknownZone)
	_, err = Parse("2026-11-07 10:30:00+01:00", "Europe/Paris")
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrUnknownZone))
}

func TestRender(t *testing.T) {
	t.Parallel()
	loc, err := LoadZone("Europe/Paris")
	require.NoError(t, err)
	at := time.Date(2026, 11, 7, 9, 30, 0, 0, time.UTC)
	require.Equal(t, "2026-11-07 10:30 (+01:00, Europe/Paris)", Render(at, loc))
}

// FuzzResolve checks the one promise Resolve makes: whatever it returns reads
// back as the wall time asked for, and whatever it refuses has candidates
// that do not.
func FuzzResolve(f *testing.F) {
	f.Add(int64(1774747800), "Europe/Paris")
	f.Add(int64(1793151000), "America/New_York")
	f.Fuzz(func(t *testing.T, secs int64, zone string) {
		loc, err := LoadZone(zone)
		if err != nil {
			return
		}
		wall := time.Unix(secs%(1<<34), 0).UTC()
		got, err := Resolve(wall, loc)
		var gap *NonexistentError
		var overlap *AmbiguousError
		switch {
		case err == nil:
			require.True(t, sameWall(got, wall), "resolved %v reads back differently from %v", got, wall)
		case errors.As(err, &overlap):
			require.True(t, sameWall(overlap.Earlier, wall) && sameWall(overlap.Later, wall))
			require.True(t, overlap.Earlier.Before(overlap.Later))
		case errors.As(err, &gap):
			require.False(t, sameWall(gap.Earlier, wall))
			require.False(t, sameWall(gap.Later, wall))
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	})
}
