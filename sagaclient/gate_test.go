package sagaclient

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fill admits calls until the gate refuses, and reports how many it took.
func fill(g *gate) int {
	n := 0
	for g.enter() {
		n++
	}
	return n
}

func drain(g *gate, n int, took time.Duration) {
	for range n {
		g.done(took)
	}
}

// The gate admits its bound, no more; slow answers lower what it admits,
// never below minLimit, and fast ones under a full gate raise it back,
// never above the bound.
func TestTheGateAdaptsToHowLongCallsTake(t *testing.T) {
	t.Parallel()
	g := newGate(20, 3*time.Second, nil)
	require.Equal(t, 20, fill(g))
	drain(g, 20, 2*time.Second) // slower than half the commit wait
	shrunk := fill(g)
	require.Less(t, shrunk, 20)
	require.GreaterOrEqual(t, shrunk, minLimit)
	drain(g, shrunk, 2*time.Second)
	for range 50 {
		drain(g, fill(g), 2*time.Second)
	}
	inFlight := fill(g)
	require.Equal(t, minLimit, inFlight, "never below the floor")
	for range 50 {
		drain(g, inFlight, 100*time.Millisecond)
		inFlight = fill(g)
		require.LessOrEqual(t, inFlight, 20)
	}
	require.Equal(t, 20, inFlight, "fast answers under a full gate bring it back to its bound")
	drain(g, 20, time.Second) // neither slow nor fast: unchanged
	require.Equal(t, 20, fill(g))
	small := newGate(2, 3*time.Second, nil)
	require.Equal(t, 2, fill(small))
	drain(small, 2, 2*time.Second)
	require.Equal(t, 2, fill(small), "a bound under the floor stays the bound")
	require.Nil(t, newGate(0, time.Second, nil), "no bound: every call admitted")
	require.True(t, (*gate)(nil).enter())
}
