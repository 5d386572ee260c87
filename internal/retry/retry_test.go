package retry

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Graph's throttling guidance shows Retry-After with a fraction of a
// second; HTTP dates and whole seconds are the other forms.
func TestRetryAfterIsReadInEachForm(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{
		"3":     3 * time.Second,
		"2.128": 2128 * time.Millisecond,
		"0":     0,
		"-1":    0,
		"soon":  0,
		"":      0,
	} {
		require.Equal(t, want, ParseAfter(http.Header{"Retry-After": {v}}), "Retry-After: %q", v)
	}
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	got := ParseAfter(http.Header{"Retry-After": {at}})
	require.InDelta(t, 90, got.Seconds(), 2)
}
