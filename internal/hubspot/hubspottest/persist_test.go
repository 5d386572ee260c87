package hubspottest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// What the API wrote is there after a crash (the journal) and after a
// clean stop (the snapshot): meetings, contacts, their associations and
// the custom properties.
func TestTheAccountOutlivesARestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hubspot.json")
	a := New("tok")
	require.NoError(t, a.Keep(path))
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	send := func(method, p, body string) {
		req, err := http.NewRequest(method, srv.URL+p, bytes.NewBufferString(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer tok")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Less(t, res.StatusCode, 300, "%s %s", method, p)
		res.Body.Close()
	}
	send("POST", "/crm/v3/properties/meetings/groups", `{"name":"g","label":"g"}`)
	send("POST", "/crm/v3/properties/meetings", `{"name":"k","label":"k","type":"string","fieldType":"text","groupName":"g","hasUniqueValue":true}`)
	send("POST", "/crm/v3/objects/meetings/batch/upsert", `{"inputs":[{"id":"b-1","idProperty":"k","properties":{"hs_timestamp":"2026-12-08T09:00:00Z"}}]}`)
	send("POST", "/crm/v3/objects/contacts/batch/upsert", `{"inputs":[{"id":"a@example.com","idProperty":"email","properties":{"firstname":"A"}}]}`)
	m, c := a.Meetings()[0].ID, a.Contacts()[0].ID
	send("PUT", "/crm/v4/objects/meetings/"+m+"/associations/default/contacts/"+c, "")

	crashed := New("tok")
	require.NoError(t, crashed.Keep(path))
	require.Equal(t, a.Meetings(), crashed.Meetings())
	require.Equal(t, a.Contacts(), crashed.Contacts())
	require.Equal(t, []string{c}, crashed.Meetings()[0].Contacts)

	require.NoError(t, a.Save(path))
	send("POST", "/crm/v3/objects/contacts/gdpr-delete", `{"objectId":"`+c+`"}`)
	stopped := New("tok")
	require.NoError(t, stopped.Keep(path))
	require.Empty(t, stopped.Contacts(), "the delete after the snapshot, from the journal")
	require.Empty(t, stopped.Meetings()[0].Contacts)
	require.True(t, stopped.props[meetings]["k"].HasUniqueValue)
}
