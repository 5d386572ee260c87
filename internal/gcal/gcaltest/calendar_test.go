package gcaltest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
)

const cal = "room@example.test"

// setupCalendar serves a fake calendar and returns the real client for it.
func setupCalendar(t *testing.T) (*gcaltest.Calendar, *calendar.Service, string) {
	t.Helper()
	fake := gcaltest.NewCalendar()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+"/calendar/v3/"), option.WithoutAuthentication())
	require.NoError(t, err)
	return fake, svc, srv.URL
}

func ev(id, start, end string) *calendar.Event {
	return &calendar.Event{Id: id, Summary: id,
		Start: &calendar.EventDateTime{DateTime: start}, End: &calendar.EventDateTime{DateTime: end}}
}

func code(t *testing.T, err error) int {
	t.Helper()
	var ge *googleapi.Error
	require.ErrorAs(t, err, &ge)
	return ge.Code
}

func TestCalendarBehavesLikeGoogle(t *testing.T) {
	t.Parallel()
	_, svc, _ := setupCalendar(t)
	ctx := context.Background()
	e := svc.Events

	_, err := e.Insert(cal, ev("Bad-Id!", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
	require.Equal(t, http.StatusBadRequest, code(t, err), "ids are base32hex")
	_, err = e.Insert(cal, ev("abcde", "2026-12-08T10:00:00Z", "2026-12-08T09:00:00Z")).Do()
	require.Equal(t, http.StatusBadRequest, code(t, err), "end before start")

	first, err := e.Insert(cal, ev("abcde", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Context(ctx).Do()
	require.NoError(t, err)
	_, err = e.Insert(cal, ev("abcde", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
	require.Equal(t, http.StatusConflict, code(t, err))

	upd := e.Update(cal, "abcde", ev("abcde", "2026-12-08T11:00:00Z", "2026-12-08T12:00:00Z"))
	upd.Header().Set("If-Match", `"stale"`)
	_, err = upd.Do()
	require.Equal(t, http.StatusPreconditionFailed, code(t, err))
	upd = e.Update(cal, "abcde", ev("abcde", "2026-12-08T11:00:00Z", "2026-12-08T12:00:00Z"))
	upd.Header().Set("If-Match", first.Etag)
	moved, err := upd.Do()
	require.NoError(t, err)
	require.NotEqual(t, first.Etag, moved.Etag)

	patched, err := e.Patch(cal, "abcde", &calendar.Event{Summary: "renamed"}).Do()
	require.NoError(t, err)
	require.Equal(t, "renamed", patched.Summary)
	require.Equal(t, moved.Start.DateTime, patched.Start.DateTime, "patch keeps what it does not name")

	require.NoError(t, e.Delete(cal, "abcde").Do())
	require.Equal(t, http.StatusGone, code(t, e.Delete(cal, "abcde").Do()))
	require.Equal(t, http.StatusNotFound, code(t, e.Delete(cal, "zzzzz0").Do()))
	tomb, err := e.Get(cal, "abcde").Do()
	require.NoError(t, err)
	require.Equal(t, "cancelled", tomb.Status, "deleted events stay as tombstones")
	_, err = e.Insert(cal, ev("abcde", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
	require.Equal(t, http.StatusConflict, code(t, err), "a tombstone still holds its id")
}

func TestCalendarListHonoursRangesAndShowDeleted(t *testing.T) {
	t.Parallel()
	_, svc, _ := setupCalendar(t)
	e := svc.Events
	for _, x := range []*calendar.Event{
		ev("before", "2026-12-08T07:00:00Z", "2026-12-08T08:00:00Z"),
		ev("edge00", "2026-12-08T08:00:00Z", "2026-12-08T09:00:00Z"),
		ev("inside", "2026-12-08T09:30:00Z", "2026-12-08T10:30:00Z"),
		ev("gone00", "2026-12-08T09:00:00Z", "2026-12-08T09:30:00Z"),
		ev("late00", "2026-12-08T11:00:00Z", "2026-12-08T12:00:00Z"),
	} {
		_, err := e.Insert(cal, x).Do()
		require.NoError(t, err)
	}
	require.NoError(t, e.Delete(cal, "gone00").Do())

	ids := func(c *calendar.EventsListCall) []string {
		res, err := c.TimeMin("2026-12-08T09:00:00Z").TimeMax("2026-12-08T11:00:00Z").Do()
		require.NoError(t, err)
		var out []string
		for _, x := range res.Items {
			out = append(out, x.Id)
		}
		return out
	}
	require.Equal(t, []string{"inside"}, ids(e.List(cal)), "an event ending at timeMin or starting at timeMax is outside")
	require.Equal(t, []string{"gone00", "inside"}, ids(e.List(cal).ShowDeleted(true)))

	page, err := e.List(cal).MaxResults(2).Do()
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	rest, err := e.List(cal).MaxResults(2).PageToken(page.NextPageToken).Do()
	require.NoError(t, err)
	require.Len(t, rest.Items, 2)
	require.Empty(t, rest.NextPageToken)
}

func TestFaultsCanBeInjectedOverHTTP(t *testing.T) {
	t.Parallel()
	fake, svc, url := setupCalendar(t)
	res, err := http.Post(url+"/_fake/faults", "application/json",
		bytes.NewBufferString(`{"op":"events.get","times":1,"status":503}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	res, err = http.Post(url+"/_fake/faults", "application/json", bytes.NewBufferString(`{"op":"events.get","status":200}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "a fault must be an error status")

	_, err = svc.Events.Get(cal, "nothere").Do()
	require.Equal(t, http.StatusServiceUnavailable, code(t, err))
	_, err = svc.Events.Get(cal, "nothere").Do()
	require.Equal(t, http.StatusNotFound, code(t, err), "the fault was used up")
	require.Equal(t, 2, fake.Calls("events.get"))
}
