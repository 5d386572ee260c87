package graphtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A mailbox the fake only knows from its saved file (the dev stack after
// a restart) answers getSchedule under its address, as Graph does.
func TestARestoredMailboxAnswersUnderItsAddress(t *testing.T) {
	t.Parallel()
	app := GraphApp{TenantID: "t", ClientID: "c", ClientSecret: "s"}
	path := filepath.Join(t.TempDir(), "graph.json")
	first := NewGraph(app, "room@agency.example")
	first.Put("room@agency.example", GraphEvent{Subject: "busy", Start: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)})
	require.NoError(t, first.Save(path))

	g := NewGraph(app)
	require.NoError(t, g.Keep(path))
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	res, err := http.PostForm(srv.URL+"/t/oauth2/v2.0/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"c"},
		"client_secret": {"s"}, "scope": {"https://graph.microsoft.com/.default"}})
	require.NoError(t, err)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tok))
	require.NoError(t, res.Body.Close())

	body := `{"schedules":["room@agency.example"],"startTime":{"dateTime":"2026-12-08T00:00:00","timeZone":"UTC"},"endTime":{"dateTime":"2026-12-09T00:00:00","timeZone":"UTC"}}`
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1.0/users/room@agency.example/calendar/getSchedule", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out struct {
		Value []struct {
			ScheduleID    string            `json:"scheduleId"`
			ScheduleItems []json.RawMessage `json:"scheduleItems"`
		} `json:"value"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Len(t, out.Value, 1)
	require.Equal(t, "room@agency.example", out.Value[0].ScheduleID)
	require.Len(t, out.Value[0].ScheduleItems, 1)
}
