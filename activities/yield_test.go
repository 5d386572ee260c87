package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// never is a budget that does not run out.
var never <-chan time.Time

func TestAMirrorGoesAtOnceWhenNoCommitIsInFlight(t *testing.T) {
	t.Parallel()
	var g commitsFirst
	require.Equal(t, yieldNone, g.wait(context.Background(), never))
	end := g.begin()
	end()
	end() // a second call is the same end
	require.Equal(t, yieldNone, g.wait(context.Background(), never))
}

// parked starts a mirror's wait and returns once it is waiting, with the
// channel its reason comes on.
func parked(t *testing.T, g *commitsFirst, ctx context.Context, budget <-chan time.Time) <-chan yielded {
	t.Helper()
	got := make(chan yielded, 1)
	go func() { got <- g.wait(ctx, budget) }()
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.waiting == 1
	}, 5*time.Second, time.Millisecond)
	return got
}

func TestAMirrorWaitsUntilNoCommitIsInFlight(t *testing.T) {
	t.Parallel()
	var g commitsFirst
	first, second := g.begin(), g.begin()
	got := parked(t, &g, context.Background(), never)
	first()
	select {
	case why := <-got:
		t.Fatalf("the mirror went ahead (%s) with a commit still in flight", why)
	default:
	}
	second()
	require.Equal(t, yieldIdle, <-got)
	require.Equal(t, yieldNone, g.wait(context.Background(), never), "an idle worker holds no mirror")
}

func TestAMirrorGoesAheadWhenItsBudgetRunsOut(t *testing.T) {
	t.Parallel()
	var g commitsFirst
	defer g.begin()() // in flight throughout
	budget := make(chan time.Time, 1)
	got := parked(t, &g, context.Background(), budget)
	budget <- time.Time{}
	require.Equal(t, yieldBudget, <-got)

	ctx, cancel := context.WithCancel(context.Background())
	got = parked(t, &g, ctx, never)
	cancel()
	require.Equal(t, yieldStopped, <-got)
}
