package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// countedAgencies knows lyon, and counts its lookups.
type countedAgencies struct{ lookups atomic.Int32 }

func (c *countedAgencies) FindAgency(_ context.Context, id string) (agency.Agency, error) {
	c.lookups.Add(1)
	if id == "lyon" {
		return agency.Agency{No: 2, ID: "lyon"}, nil
	}
	return agency.Agency{}, booking.ErrNotFound
}

// A platform's call to an agency's tool URL acts for that agency, named
// "<platform>@<agency>"; a call to an agency the deployment lacks is
// refused, and refused again from memory for a while: made-up agencies
// don't each cost the store a read. A signature is checked as the
// agency: Verify sees the call acting for it.
func TestAPlatformsCallToAnAgencysURLActsForIt(t *testing.T) {
	t.Parallel()
	var now atomic.Int64 // the handlers read it on the server's goroutines
	now.Store(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	found := &countedAgencies{}
	s := New(Config{Agencies: found, Settings: Settings{Now: clock}})
	var mu sync.Mutex
	var verifiedAs, handledAs, caller string
	s.Mount(Route{Method: "POST", Path: "/v1/agencies/{agency}/tools/vapi", PerCall: true,
		Verify: func(r *http.Request, _ []byte) *Error {
			mu.Lock()
			defer mu.Unlock()
			verifiedAs = agency.From(r.Context()).ID
			return nil
		},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			mu.Lock()
			handledAs, caller = agency.From(r.Context()).ID, Caller(r.Context())
			mu.Unlock()
			return WriteJSON(w, http.StatusOK, map[string]string{})
		}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	post := func(agencyID string) int {
		res, err := srv.Client().Post(srv.URL+"/v1/agencies/"+agencyID+"/tools/vapi", "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}

	require.Equal(t, http.StatusOK, post("lyon"))
	mu.Lock()
	seen := []string{verifiedAs, handledAs, caller}
	mu.Unlock()
	require.Equal(t, []string{"lyon", "lyon", "vapi@lyon"}, seen, "verified and handled as the agency, under the platform's name at it")

	before := found.lookups.Load()
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, post("nantes"))
	}
	require.Equal(t, before+1, found.lookups.Load(), "a made-up agency is looked up once")
	now.Add(int64(missingFor))
	require.Equal(t, http.StatusUnauthorized, post("nantes"))
	require.Equal(t, before+2, found.lookups.Load(), "and again once the time has passed: an agency made meanwhile is found")
	require.Equal(t, http.StatusUnauthorized, post("Not-An-Id"))
	require.Equal(t, before+2, found.lookups.Load(), "a malformed id is no agency: never looked up")
}
