package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// The document describes the whole edge, the REST routes and the voice
// tools' and staff's mounted on them, and nothing else.
func TestOpenAPIDescribesExactlyTheServedRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(edge.OpenAPI(), &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3."))
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, rt := range edgeServer(desk.New(nil, nil, desk.Options{}), EdgeConfig{}).Routes() {
		// The callers' pages are HTML for people, not the agents' API
		// (docs/receipts.md).
		if rt.Path != agency.PagePattern && rt.Path != agency.AgencyPagePattern {
			served[rt.Method+" "+rt.Path] = true
		}
	}
	require.Equal(t, served, documented)
}
