package agency

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

var lyon = Agency{No: 7, ID: "lyon"}

// Another agency's workflow ids carry it; the default agency's are the
// ids themselves, as before agencies, and never read as another's.
func TestAnotherAgencysWorkflowIDsCarryIt(t *testing.T) {
	t.Parallel()
	require.Equal(t, "k1", WorkflowID(Default, "k1"))
	wid := WorkflowID(lyon, "k1")
	require.Equal(t, "agency:lyon:k1", wid)
	require.Equal(t, wid, Scoped(With(context.Background(), lyon), "k1"))

	key, ok := Unscoped(lyon, wid)
	require.True(t, ok)
	require.Equal(t, "k1", key)
	_, ok = Unscoped(Default, wid)
	require.False(t, ok, "the default agency reads lyon's id as its own")
	_, ok = Unscoped(Agency{No: 8, ID: "ly"}, wid)
	require.False(t, ok, "an agency whose id prefixes lyon's reads lyon's ids")
	key, ok = Unscoped(Default, "k1")
	require.True(t, ok)
	require.Equal(t, "k1", key)
	require.Equal(t, "lyon", OfWorkflowID(wid))
	require.Equal(t, "lyon", OfWorkflowID(WorkflowID(lyon, "caller-messages:q")))
	require.Equal(t, "", OfWorkflowID("k1"), "the default agency's")
}

// A metric names the first agencies by id and the rest together, so that
// its series stay bounded whatever the deployment grows to.
func TestAMetricNamesABoundedNumberOfAgencies(t *testing.T) {
	t.Parallel()
	require.Equal(t, "default", Default.Label())
	require.Equal(t, "lyon", lyon.Label())
	require.Equal(t, "nantes", Agency{No: MaxLabelled, ID: "nantes"}.Label())
	require.Equal(t, "other", Agency{No: MaxLabelled + 1, ID: "brest"}.Label())
}
