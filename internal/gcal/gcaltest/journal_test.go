package gcaltest_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
)

// A calendar that saves each write is whole again after its process dies
// without a Save: the log of changes replays over the last snapshot.
func TestTheCalendarSurvivesACrashWithoutASave(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "calendar.json")
	first, svc, _ := setupCalendar(t)
	require.NoError(t, first.Keep(path))
	e := svc.Events
	for _, id := range []string{"aaaaa", "bbbbb", "ccccc"} {
		_, err := e.Insert(cal, ev(id, "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
		require.NoError(t, err)
	}
	require.NoError(t, first.Save(path)) // a snapshot in the middle
	_, err := e.Update(cal, "bbbbb", ev("bbbbb", "2026-12-08T11:00:00Z", "2026-12-08T12:00:00Z")).Do()
	require.NoError(t, err)
	require.NoError(t, e.Delete(cal, "ccccc").Do())
	before := first.Events(cal)

	// Crashed: no Save. A new process loads what is on disk.
	second := gcaltest.NewCalendar()
	require.NoError(t, second.Keep(path))
	require.Equal(t, before, second.Events(cal))
	srv := httptest.NewServer(second)
	t.Cleanup(srv.Close)
	svc2, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+"/calendar/v3/"), option.WithoutAuthentication())
	require.NoError(t, err)
	next, err := svc2.Events.Insert(cal, ev("ddddd", "2026-12-08T13:00:00Z", "2026-12-08T14:00:00Z")).Do()
	require.NoError(t, err)
	for _, old := range before {
		require.NotEqual(t, old.Etag, next.Etag, "etags keep counting after a crash")
	}
}

// Log lines older than the snapshot (a crash between writing the snapshot
// and emptying the log) must not take the calendar back in time.
func TestOldLogLinesDoNotUndoTheSnapshot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "calendar.json")
	fake, svc, _ := setupCalendar(t)
	require.NoError(t, fake.Keep(path))
	_, err := svc.Events.Insert(cal, ev("aaaaa", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
	require.NoError(t, err)
	stale, err := os.ReadFile(path + ".log")
	require.NoError(t, err)
	require.NoError(t, svc.Events.Delete(cal, "aaaaa").Do())
	require.NoError(t, fake.Save(path))
	require.NoError(t, os.WriteFile(path+".log", stale, 0o600))

	again := gcaltest.NewCalendar()
	require.NoError(t, again.Keep(path))
	require.Equal(t, "cancelled", again.Events(cal)[0].Status)
}

// A torn last line (a crash mid-write) is cut off on load, so what is
// written after it is read by the next load, not glued to the fragment.
func TestATornLineIsCutOffOnLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "calendar.json")
	first, svc, _ := setupCalendar(t)
	require.NoError(t, first.Keep(path))
	_, err := svc.Events.Insert(cal, ev("aaaaa", "2026-12-08T09:00:00Z", "2026-12-08T10:00:00Z")).Do()
	require.NoError(t, err)
	f, err := os.OpenFile(path+".log", os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"change":{"calen`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	second := gcaltest.NewCalendar()
	require.NoError(t, second.Keep(path))
	srv := httptest.NewServer(second)
	t.Cleanup(srv.Close)
	require.NoError(t, second.Keep(path))
	svc2, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+"/calendar/v3/"), option.WithoutAuthentication())
	require.NoError(t, err)
	_, err = svc2.Events.Insert(cal, ev("bbbbb", "2026-12-08T11:00:00Z", "2026-12-08T12:00:00Z")).Do()
	require.NoError(t, err)

	third := gcaltest.NewCalendar()
	require.NoError(t, third.Keep(path))
	require.Len(t, third.Events(cal), 2, "the write after the torn line survives")
}
