package phone

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSame(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b, zone string
		same       bool
	}{
		{"+33 6 12 34 56 78", "06 12 34 56 78", "Europe/Paris", true},
		{"+33 6 12 34 56 78", "0033612345678", "Europe/Paris", true},
		{"06 12 34 56 78", "0033 612 345 678", "Europe/Paris", true},
		{"+1 (604) 555-0199", "604-555-0199", "America/Vancouver", true},
		{"+44 20 7946 0018", "020 7946 0018", "Europe/London", true},
		{"+33 6 12 34 56 78", "06 12 34 56 79", "Europe/Paris", false},
		{"+33 6 12 34 56 78", "+44 6 12 34 56 78", "Europe/Paris", false},
		{"+33 6 12 34 56 78", "+49 6 12 34 56 78", "Europe/Paris", false},
		{"+33 6 12 34 56 78", "06 12 34 56 78", "Europe/London", false}, // a national number reads in the property's country
		{"+33 6 12 34 56 78", "7812345678 33", "Europe/Paris", false},
		{"+33 6 12 34 56 78", "12 34 56 78", "Europe/Paris", false}, // the last digits are not the number
		{"12345678", "45678", "Europe/Paris", false},
		{"", "", "Europe/Paris", false},
		{"06 12 34 56 78", "+33 6 12 34 56 78", "Mars/Olympus", false}, // no region: a national number can't be read
		{"+33 6 12 34 56 78", "+33612345678", "Mars/Olympus", true},
	} {
		require.Equal(t, tc.same, Same(tc.a, tc.b, tc.zone), "%q %q in %s", tc.a, tc.b, tc.zone)
	}
}
