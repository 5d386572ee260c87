package booking

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An error a provider answered is stored without the caller's e-mail or
// phone; ids, codes and words stay.
func TestScrubTakesOutContactsOnly(t *testing.T) {
	t.Parallel()
	in := `twilio lookup +33 6 12 34 56 78: status 404 (code 20404); hubspot contact 100000001: "jeanne.dupont@example.com" exists`
	require.Equal(t, `twilio lookup [phone]: status 404 (code 20404); hubspot contact 100000001: "[email]" exists`, Scrub(in))
	require.Equal(t, `Get "https://api.twilio.com/Messages.json?To=[phone]&From=[phone]&Email=[email]"`,
		Scrub(`Get "https://api.twilio.com/Messages.json?To=%2B33612345678&From=+33700000000&Email=a.b%40example.com"`))
}
