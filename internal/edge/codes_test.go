package edge

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// codesInSource are every code the service declares (booking.Codes).
func codesInSource(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, c := range booking.Codes() {
		out = append(out, string(c))
	}
	return out
}

// The document lists every code as an enum, for generated clients to
// switch on, and no code that the source does not have.
func TestEveryCodeIsAnEnumValue(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc, &doc))
	enum := slices.Sorted(slices.Values(doc.Components.Schemas.Error.Properties.Code.Enum))
	require.Equal(t, codesInSource(t), enum)
}
