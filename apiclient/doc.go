// Package apiclient is a Go client of the agent API, generated from its
// OpenAPI document (internal/edge/openapi.json) by oapi-codegen: an agent backend
// that talks HTTP rather than Temporal can use it as it is. Regenerate it
// with `go generate ./apiclient` after changing the document;
// TestTheClientIsTheDocumentsOwn fails until then.
package apiclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config oapi-codegen.yaml ../internal/edge/openapi.json
