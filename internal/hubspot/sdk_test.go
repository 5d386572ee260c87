package hubspot

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// sdkRequest is one kind of request the adapter sends, as .ci/run checks
// it against HubSpot's own SDK (@hubspot/api-client, whose models and
// paths are generated from HubSpot's OpenAPI documents):
// scripts/hubspot-sdk-check finds the operation by its path and method in
// API and checks the query's names against it and the body against Model.
type sdkRequest struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Query  []string        `json:"query,omitempty"`
	API    string          `json:"api"`
	Model  string          `json:"model,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// operations names each path the adapter calls, as a ServeMux pattern,
// after the SDK's file for it: a path the adapter starts calling fails
// the test until it is named.
var operations = map[string]sdkRequest{
	"POST /crm/v3/properties/{objectType}/groups": {Path: "/crm/v3/properties/{objectType}/groups", API: "crm/properties/apis/GroupsApi.js",
		Model: "crm/properties/models/PropertyGroupCreate"},
	"POST /crm/v3/properties/{objectType}": {Path: "/crm/v3/properties/{objectType}", API: "crm/properties/apis/CoreApi.js",
		Model: "crm/properties/models/PropertyCreate"},
	"POST /crm/v3/objects/meetings/batch/upsert": {Path: "/crm/v3/objects/meetings/batch/upsert", API: "crm/objects/meetings/apis/BatchApi.js",
		Model: "crm/objects/meetings/models/BatchInputSimplePublicObjectBatchInputUpsert"},
	"GET /crm/v3/objects/meetings/{id}": {Path: "/crm/v3/objects/meetings/{meetingId}", API: "crm/objects/meetings/apis/BasicApi.js"},
	"POST /crm/v3/objects/contacts/search": {Path: "/crm/v3/objects/contacts/search", API: "crm/contacts/apis/SearchApi.js",
		Model: "crm/contacts/models/PublicObjectSearchRequest"},
	"POST /crm/v3/objects/contacts/batch/upsert": {Path: "/crm/v3/objects/contacts/batch/upsert", API: "crm/contacts/apis/BatchApi.js",
		Model: "crm/contacts/models/BatchInputSimplePublicObjectBatchInputUpsert"},
	"GET /crm/v3/objects/contacts/{id}": {Path: "/crm/v3/objects/contacts/{contactId}", API: "crm/contacts/apis/BasicApi.js"},
	"POST /crm/v3/objects/contacts/gdpr-delete": {Path: "/crm/v3/objects/contacts/gdpr-delete", API: "crm/contacts/apis/BasicApi.js",
		Model: "crm/contacts/models/PublicGdprDeleteInput"},
	"PUT /crm/v4/objects/meetings/{id}/associations/default/contacts/{contactId}": {
		Path: "/crm/v4/objects/{fromObjectType}/{fromObjectId}/associations/default/{toObjectType}/{toObjectId}",
		API:  "crm/associations/v4/apis/BasicApi.js"},
	"DELETE /crm/v4/objects/meetings/{id}/associations/contacts/{contactId}": {
		Path: "/crm/v4/objects/{objectType}/{objectId}/associations/{toObjectType}/{toObjectId}",
		API:  "crm/associations/v4/apis/BasicApi.js"},
}

// operationOf is the operation r is, by the pattern naming it.
var operationOf = func() func(r *http.Request) (sdkRequest, bool) {
	mux := http.NewServeMux()
	for pattern := range operations {
		mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	}
	return func(r *http.Request) (sdkRequest, bool) {
		_, pattern := mux.Handler(r)
		op, ok := operations[pattern]
		return op, ok
	}
}()

// recorder keeps the first request of each kind the adapter sends.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []sdkRequest
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	op, ok := operationOf(r)
	rc.mu.Lock()
	if !ok {
		op = sdkRequest{Path: r.URL.Path + " (not named in operations)"}
	}
	op.Method = r.Method
	if !slices.ContainsFunc(rc.seen, func(s sdkRequest) bool { return s.Method == op.Method && s.Path == op.Path }) {
		for name := range r.URL.Query() {
			op.Query = append(op.Query, name)
		}
		slices.Sort(op.Query)
		if len(body) > 0 {
			op.Body = body
		}
		rc.seen = append(rc.seen, op)
	}
	rc.mu.Unlock()
	rc.next.ServeHTTP(w, r)
}

// The requests the adapter sends are the ones kept in
// testdata/requests.json, which .ci/run checks against HubSpot's SDK;
// UPDATE_HUBSPOT_REQUESTS=1 writes them again.
func TestRequestsMatchTheSDKsRecord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rc := &recorder{next: f.fake}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	c := f.client(t, "pat-na1-test")
	ctx := context.Background()
	_, err := c.Upsert(ctx, viewing(), 0)
	require.NoError(t, err)
	rec, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	contact, err := c.Link(ctx, rec.ID, crm.Caller{Name: "Jeanne Dupont", Email: "jeanne@example.com", Phone: "+33612345678"})
	require.NoError(t, err)
	_, err = c.Link(ctx, rec.ID, crm.Caller{Email: "jeanne@example.com", ContactID: contact.ContactID})
	require.NoError(t, err)
	require.NoError(t, c.Unlink(ctx, contact.ContactID, []string{rec.ID}))
	require.NoError(t, c.Forget(ctx, contact.ContactID))
	for _, s := range rc.seen {
		require.NotContains(t, s.Path, "not named", "name the SDK's operation for it in operations")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(rc.seen))
	const golden = "testdata/requests.json"
	if os.Getenv("UPDATE_HUBSPOT_REQUESTS") != "" {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(want)), strings.TrimSpace(buf.String()), "run with UPDATE_HUBSPOT_REQUESTS=1, then .ci/run's SDK check")
}
