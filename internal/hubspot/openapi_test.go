package hubspot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// conformance checks each request reaching the fake, and the fake's
// answer, against HubSpot's published OpenAPI documents
// (testdata/openapi, whose SOURCE.md names where they come from): the
// adapter and the fake can't drift from the real API together.
type conformance struct {
	next    http.Handler
	routers []routers.Router
	mu      sync.Mutex
	checked map[string]bool // "METHOD /path/{template}" of the operations checked
	answers map[int]bool    // the statuses the fake answered
	wrong   []string
}

func newConformance(t *testing.T, next http.Handler) *conformance {
	t.Helper()
	c := &conformance{next: next, checked: map[string]bool{}, answers: map[int]bool{}}
	files, err := filepath.Glob("testdata/openapi/*.json")
	require.NoError(t, err)
	require.Len(t, files, 4, "meetings, contacts, properties and associations")
	for _, f := range files {
		doc, err := openapi3.NewLoader().LoadFromFile(f)
		require.NoError(t, err, f)
		// The documents' server is api.hubapi.com; the paths are the fake's.
		doc.Servers = openapi3.Servers{{URL: "/"}}
		// HubSpot's documents carry examples their own schemas refuse
		// (a string where an object is declared): the schemas are
		// checked, the examples not.
		r, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
		require.NoError(t, err, f)
		c.routers = append(c.routers, r)
	}
	return c
}

func (c *conformance) route(r *http.Request) (*routers.Route, map[string]string) {
	for _, rt := range c.routers {
		if route, params, err := rt.FindRoute(r); err == nil {
			return route, params
		}
	}
	return nil, nil
}

func (c *conformance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	route, params := c.route(r)
	if route == nil {
		c.fail("%s %s is no operation of HubSpot's documents", r.Method, r.URL.Path)
		c.next.ServeHTTP(w, r)
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		c.fail("request %s %s: %v", r.Method, route.Path, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	c.next.ServeHTTP(rec, r)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(withoutNullProperties(rec.Body.Bytes()))), Options: opts}
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		c.fail("answer %d to %s %s: %v", rec.Code, r.Method, route.Path, err)
	}
	c.mu.Lock()
	c.checked[route.Method+" "+route.Path], c.answers[rec.Code] = true, true
	c.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// fail keeps what broke the documents, without the schemas the
// validator's message quotes.
func (c *conformance) fail(format string, args ...any) {
	var short []string
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		if line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "Schema:") && !strings.HasPrefix(line, "Value:") {
			short = append(short, line)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wrong = append(c.wrong, strings.Join(short, " | "))
}

// Every operation the adapter calls is sent to the fake and answered, on
// the happy path and off it (a second worker's property creation that
// HubSpot answers 409, a meeting not there, a wrong token), and both
// sides keep HubSpot's documents.
func TestRequestsAndAnswersKeepHubSpotsOpenAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	conf := newConformance(t, f.fake)
	srv := httptest.NewServer(conf)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	ctx := context.Background()
	c := f.client(t, "pat-na1-test")
	_, err := c.Upsert(ctx, viewing(), 0)
	require.NoError(t, err)
	rec, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	_, err = c.Get(ctx, "b-absent")
	require.ErrorIs(t, err, crm.ErrNotFound)
	contact, err := c.Link(ctx, rec.ID, crm.Caller{Name: "Jeanne Dupont", Email: "jeanne@example.com", Phone: "+33612345678"})
	require.NoError(t, err)
	_, err = c.Link(ctx, rec.ID, crm.Caller{Email: "jeanne@example.com", ContactID: contact.ContactID})
	require.NoError(t, err)
	paul, err := c.Link(ctx, rec.ID, crm.Caller{Name: "Paul Martin", Phone: "+33698765432"})
	require.NoError(t, err)
	require.NoError(t, c.Unlink(ctx, paul.ContactID, []string{rec.ID}))
	require.NoError(t, c.Forget(ctx, contact.ContactID))
	second := viewing()
	second.BookingID, second.RequestKey = "b-2", "k-2"
	_, err = f.client(t, "pat-na1-test").Upsert(ctx, second, 0) // a second worker: its properties exist
	require.NoError(t, err)
	_, err = f.client(t, "pat-na1-wrong").Get(ctx, "b-1")
	require.Error(t, err)

	require.Empty(t, conf.wrong)
	var want, got []string
	for pattern, op := range operations {
		method, _, _ := strings.Cut(pattern, " ")
		want = append(want, method+" "+op.Path)
	}
	for op := range conf.checked {
		got = append(got, op)
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got, "each operation the adapter calls, checked")
	for _, status := range []int{http.StatusOK, http.StatusCreated, http.StatusNoContent, http.StatusNotFound, http.StatusConflict, http.StatusUnauthorized} {
		require.True(t, conf.answers[status], "an answer %d was checked", status)
	}
}

// withoutNullProperties drops the null values of an answer's objects'
// properties. HubSpot answers null for a property asked for and never set,
// though its documents declare the values strings; the fake does as
// HubSpot does (the adapter has to read it), and this is the one
// difference from the documents the check lets by.
func withoutNullProperties(body []byte) []byte {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return body
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for k, p := range props {
					if p == nil {
						delete(props, k)
					}
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}
