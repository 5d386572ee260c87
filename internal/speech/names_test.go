package speech

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingNames is a store of display names that counts its reads.
type countingNames struct {
	calls atomic.Int32
	names map[string]map[string]string
}

func (c *countingNames) AllDisplayNames(context.Context) (map[string]map[string]string, error) {
	c.calls.Add(1)
	return maps.Clone(c.names), nil
}

// A spoken line reads the cache alone, never the store: the names are the
// store's as of the last refresh, a resource the API itself wrote is said
// at once, and one gone since the refresh is no longer said.
func TestALineNeverReadsTheStore(t *testing.T) {
	t.Parallel()
	src := &countingNames{names: map[string]map[string]string{"p": {"": "the Marais flat"}, "a": {"": "Claire"}}}
	n := NewNames(src)
	require.Empty(t, n.Speaker("en", "p").Names, "nothing read yet")
	require.NoError(t, n.Refresh(context.Background()))
	require.Equal(t, "the Marais flat", n.Speaker("en", "p").Names["p"])
	for range 100 {
		n.Speaker("en", "p", "a", "made-up")
	}
	require.Equal(t, int32(1), src.calls.Load(), "lines read the cache only")

	n.Set("p", map[string]string{"": "the loft"})
	require.Equal(t, map[string]string{"p": "the loft"}, n.Lookup(English, []string{"p"}))
	delete(src.names, "a")
	require.NoError(t, n.Refresh(context.Background()))
	require.Empty(t, n.Lookup(English, []string{"a"}), "a name gone from the store goes from the lines")
}

// A line says a resource's name in its own language where the agency
// gave one, and the name said in every language otherwise: no English
// name inside a French sentence.
func TestALineSaysTheNameInItsLanguage(t *testing.T) {
	t.Parallel()
	n := NewNames(&countingNames{})
	n.Set("p", map[string]string{"": "the Marais flat, 12 rue des Rosiers", "fr": "l'appartement du Marais, 12 rue des Rosiers"})
	n.Set("a", map[string]string{"": "Claire"})
	require.Equal(t, map[string]string{"p": "l'appartement du Marais, 12 rue des Rosiers", "a": "Claire"}, n.Lookup(French, []string{"p", "a"}))
	require.Equal(t, map[string]string{"p": "the Marais flat, 12 rue des Rosiers", "a": "Claire"}, n.Lookup(Chinese, []string{"p", "a"}))
	line := n.Speaker(French, "p", "a").Readback("p", time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC), "Europe/Paris")
	require.Contains(t, line, "l'appartement du Marais")
	require.NotContains(t, line, "the Marais flat")
}
