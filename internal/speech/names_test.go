package speech

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/agency"
)

// countingNames is a store of display names that counts its reads.
type countingNames struct {
	calls atomic.Int32
	names map[string]map[string]string
}

// AllDisplayNames are the default agency's names; another agency has
// none.
func (c *countingNames) AllDisplayNames(ctx context.Context) (map[string]map[string]string, error) {
	c.calls.Add(1)
	if !agency.From(ctx).IsDefault() {
		return nil, nil
	}
	return maps.Clone(c.names), nil
}

func (c *countingNames) Agencies(context.Context) ([]agency.Named, error) {
	return []agency.Named{{Agency: agency.Default}}, nil
}

var bg = context.Background()

// A spoken line reads the cache alone, never the store: the names are the
// store's as of the last refresh, a resource the API itself wrote is said
// at once, and one gone since the refresh is no longer said.
func TestALineNeverReadsTheStore(t *testing.T) {
	t.Parallel()
	src := &countingNames{names: map[string]map[string]string{"p": {"": "the Marais flat"}, "a": {"": "Claire"}}}
	n := NewNames(src)
	require.Empty(t, n.Speaker(bg, "en", "p").Names, "nothing read yet")
	require.NoError(t, n.Refresh(context.Background()))
	require.Equal(t, "the Marais flat", n.Speaker(bg, "en", "p").Names["p"])
	for range 100 {
		n.Speaker(bg, "en", "p", "a", "made-up")
	}
	require.Equal(t, int32(1), src.calls.Load(), "lines read the cache only")

	n.Set(bg, "p", map[string]string{"": "the loft"})
	require.Equal(t, map[string]string{"p": "the loft"}, n.Lookup(bg, English, []string{"p"}))
	delete(src.names, "a")
	require.NoError(t, n.Refresh(context.Background()))
	require.Empty(t, n.Lookup(bg, English, []string{"a"}), "a name gone from the store goes from the lines")
}

// A line says a resource's name in its own language where the agency
// gave one, and the name said in every language otherwise: no English
// name inside a French sentence.
func TestALineSaysTheNameInItsLanguage(t *testing.T) {
	t.Parallel()
	n := NewNames(&countingNames{})
	n.Set(bg, "p", map[string]string{"": "the Marais flat, 12 rue des Rosiers", "fr": "l'appartement du Marais, 12 rue des Rosiers"})
	n.Set(bg, "a", map[string]string{"": "Claire"})
	require.Equal(t, map[string]string{"p": "l'appartement du Marais, 12 rue des Rosiers", "a": "Claire"}, n.Lookup(bg, French, []string{"p", "a"}))
	require.Equal(t, map[string]string{"p": "the Marais flat, 12 rue des Rosiers", "a": "Claire"}, n.Lookup(bg, Chinese, []string{"p", "a"}))
	line := n.Speaker(bg, French, "p", "a").Readback("p", time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), "Europe/Paris")
	require.Contains(t, line, "l'appartement du Marais")
	require.NotContains(t, line, "the Marais flat")
}

// Two agencies may use one resource id: each agency's lines say its own
// name for it, and one agency's write leaves the other's as it was.
func TestEachAgencyNamesItsOwnResources(t *testing.T) {
	t.Parallel()
	n := NewNames(&countingNames{})
	lyon := agency.With(bg, agency.Agency{No: 7, ID: "lyon"})
	n.Set(bg, "p", map[string]string{"": "the Marais flat"})
	n.Set(lyon, "p", map[string]string{"": "the Croix-Rousse flat"})
	require.Equal(t, map[string]string{"p": "the Marais flat"}, n.Lookup(bg, English, []string{"p"}))
	require.Equal(t, map[string]string{"p": "the Croix-Rousse flat"}, n.Lookup(lyon, English, []string{"p"}))
	n.Set(lyon, "p", nil)
	require.Empty(t, n.Lookup(lyon, English, []string{"p"}))
	require.Equal(t, map[string]string{"p": "the Marais flat"}, n.Lookup(bg, English, []string{"p"}), "lyon's removal left the default's")
}
