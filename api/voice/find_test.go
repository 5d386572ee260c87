package voice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSamePhone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"+33 6 12 34 56 78", "06 12 34 56 78", true},
		{"+33 6 12 34 56 78", "0033 612 345 678", true},
		{"+33612345678", "6 12 34 56 78", true},
		{"+1 (604) 555-0199", "604-555-0199", true},
		{"+33 6 12 34 56 78", "06 12 34 56 79", false},
		{"+33 6 12 34 56 78", "+44 6 12 34 56 78", false},
		{"12345678", "45678", false},
		{"", "", false},
		{"+33 6 12 34 56 78", "7812345678 33", false},
	} {
		require.Equal(t, tc.same, samePhone(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}

func TestFindAttemptsAreLimitedPerCallAndPerReference(t *testing.T) {
	t.Parallel()
	var f finds
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for range findBurst {
		require.True(t, f.allow("call-1", "BS-AAAA-AAAA", now))
	}
	require.False(t, f.allow("call-1", "BS-BBBB-BBBB", now), "the call has spent its attempts")
	require.False(t, f.allow("call-2", "BS-AAAA-AAAA", now), "so has the reference, from any call")
	require.True(t, f.allow("call-2", "BS-BBBB-BBBB", now))
	require.True(t, f.allow("call-1", "BS-CCCC-CCCC", now.Add(findPerCall)), "one more, in time")
}
