package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/receipt"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func slot() edge.Slot {
	return edge.Slot{PropertyID: "paris-11", AgentID: "agent-00", StartsAt: "2026-12-08T10:00:00+01:00", TimeZone: "Europe/Paris", DurationMinutes: 30}
}

func TestBookingBodyNeedsAKeyAndRejectsUnknownFields(t *testing.T) {
	t.Parallel()
	_, e := BookingBody{Slot: slot(), ExpectedPolicyVersion: "p1"}.Request(now)
	require.Equal(t, "invalid_request_key", e.Code)
	_, e = BookingBody{RequestKey: strings.Repeat("k", 256), Slot: slot(), ExpectedPolicyVersion: "p1"}.Request(now)
	require.Equal(t, "invalid_request_key", e.Code)
	_, e = BookingBody{RequestKey: "k1", Slot: slot()}.Request(now)
	require.Equal(t, "missing_field", e.Code)

	var b BookingBody
	e = edge.Decode(strings.NewReader(`{"request_key":"k","propety_id":"typo"}`), 1<<10, &b)
	require.Equal(t, "bad_json", e.Code)
	e = edge.Decode(strings.NewReader(`{"request_key":"`+strings.Repeat("x", 2000)+`"}`), 1<<10, &b)
	require.Equal(t, "body_too_large", e.Code)
	require.Equal(t, 400, e.Status)
	e = edge.Decode(strings.NewReader(`{} {}`), 1<<10, &b)
	require.Equal(t, "bad_json", e.Code)
}

func FuzzBookingBody(f *testing.F) {
	f.Add([]byte(`{"request_key":"k","property_id":"p","agent_id":"a","starts_at":"2026-12-08T10:00:00+01:00","time_zone":"Europe/Paris","duration_minutes":30,"expected_policy_version":"v"}`))
	f.Add([]byte(`{"request_key":"k","property_id":"p","agent_id":"a","local_start":"2027-03-28T02:30","time_zone":"Europe/Paris","ends_at":"2027-03-28T04:00:00+02:00","expected_policy_version":"v"}`))
	f.Add([]byte(`{"local_start":"2027-11-07T01:30","time_zone":"America/New_York"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b BookingBody
		if e := edge.Decode(bytes.NewReader(data), 1<<12, &b); e != nil {
			require.NotEmpty(t, e.Code)
			return
		}
		req, e := b.Request(now)
		if e != nil {
			require.NotEmpty(t, e.Code)
			require.GreaterOrEqual(t, e.Status, 400)
			return
		}
		// Whatever passes is a concrete, valid intent in the future.
		require.NoError(t, req.Intent.Validate())
		require.True(t, req.Intent.EndsAt.After(req.Intent.StartsAt))
		require.True(t, req.Intent.StartsAt.After(now))
		require.NotEmpty(t, req.ExpectedPolicyVersion)
	})
}

// A booking call that never reached Temporal changed nothing, but a
// resend's first call may have confirmed: its 503 is an error and no
// receipt, so that no status in it can contradict the store.
func TestACallThatNeverReachedTemporalAnswersNoStatus(t *testing.T) {
	t.Parallel()
	// A Temporal client for a port nobody listens on: every call fails.
	tc, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	srv := httptest.NewServer(serve(desk.New(tc, nil, desk.Options{}), edge.Config{CallTimeout: 300 * time.Millisecond, Settings: edge.Settings{Now: func() time.Time { return now }}}))
	t.Cleanup(srv.Close)
	body, err := json.Marshal(BookingBody{RequestKey: "k-1", Slot: slot(), ExpectedPolicyVersion: "p1"})
	require.NoError(t, err)
	res, err := http.Post(srv.URL+"/v1/bookings", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	var fields map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&fields))
	for _, f := range []string{"status", "spoken", "reason"} {
		require.NotContains(t, fields, f, "a receipt's %s in an answer that speaks only of this call", f)
	}
	require.Equal(t, "temporarily_unavailable", fields["code"])
	require.Equal(t, true, fields["retryable"])
	require.Contains(t, fields["message"], "this call changed nothing")
	require.Equal(t, "k-1", fields["request_key"], "the key to send again with")
}

func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(serve(nil, edge.Config{}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v1/nothing", http.StatusNotFound, "not_found", ""},
		{"GET", "/v1/bookings/k/cancel", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{"PATCH", "/v1/bookings/k/contact", http.StatusMethodNotAllowed, "method_not_allowed", "GET, DELETE"},
		{"DELETE", "/v1/policy", http.StatusMethodNotAllowed, "method_not_allowed", "PUT, GET"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var e edge.Error
		require.NoError(t, json.NewDecoder(res.Body).Decode(&e), "%s %s", tc.method, tc.path)
		require.NoError(t, res.Body.Close())
		require.Equal(t, tc.status, res.StatusCode, "%s %s", tc.method, tc.path)
		require.Equal(t, tc.code, e.Code)
		require.Equal(t, tc.allow, res.Header.Get("Allow"))
	}
}

// failingBookings is a store that cannot be reached.
type failingBookings struct{}

func (failingBookings) Lookup(context.Context, string) (booking.Booking, error) {
	return booking.Booking{}, errors.New("connection refused")
}

func (failingBookings) CurrentPolicy(context.Context) (booking.Policy, error) {
	return booking.Policy{}, errors.New("connection refused")
}

// A reschedule that fails before anything is sent changed nothing: a
// retryable 503 error, and no status that could contradict the old
// booking, which stands.
func TestARescheduleThatCannotReadTheStoreChangesNothing(t *testing.T) {
	t.Parallel()
	url := guarded(t, edge.Config{Settings: edge.Settings{Bookings: failingBookings{}}})
	res, err := http.Post(url+"/v1/bookings/old-1/reschedule", "application/json",
		strings.NewReader(`{"new_request_key":"new-1","local_start":"2026-12-08T10:00"}`))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	var fields map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&fields))
	require.NotContains(t, fields, "status", "nothing was sent: no status, the old booking stands")
	require.Equal(t, "new-1", fields["request_key"], "the move's key, to send again with")
	require.Equal(t, true, fields["retryable"])
	require.Contains(t, fields["message"], "retry with the same request_key")
}

// panickingSagas is a saga client whose reads panic.
type panickingSagas struct{ Sagas }

func (panickingSagas) Status(context.Context, string) (receipt.Receipt, error) {
	panic("the saga client broke")
}

// A panic in a route is answered as every failure of the system is, a
// retryable 503 with its code, not a dropped connection.
func TestAPanicInARouteIsARetryableAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(serve(panickingSagas{}, edge.Config{}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/v1/bookings/k-1")
	require.NoError(t, err, "answered, not dropped")
	defer res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	var e edge.Error
	require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
	require.Equal(t, "temporarily_unavailable", e.Code)
	require.True(t, e.Retryable)
}
