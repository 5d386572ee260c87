package workflows

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
)

func TestTheSagaRefusesAnIllegalMove(t *testing.T) {
	t.Parallel()
	s := &saga{log: log.NewStructuredLogger(slog.New(slog.DiscardHandler)), st: BookingState{State: StateConfirmed}}
	require.False(t, s.setState(nil, StateCommitting), "a confirmed booking is not committed again")
	require.False(t, s.setState(nil, StateOffered))
	require.Equal(t, StateConfirmed, s.st.State, "a refused move changes nothing")
	require.Zero(t, s.changes)

	require.True(t, s.setState(nil, StateCancelled))
	require.False(t, s.setState(nil, StateConfirmed), "a cancelled saga is not confirmed again by its own steps")
	s.adopting = true
	require.True(t, s.setState(nil, StateConfirmed), "but the store's record moves it")
}

func TestEveryFinalStateIsFinal(t *testing.T) {
	t.Parallel()
	for _, st := range []State{StateConflict, StateRejected, StateExpired, StateCancelled, StateRescheduled} {
		require.True(t, st.decided(), st)
		require.Empty(t, transitions[st], "%s is final for the saga", st)
	}
	for from, tos := range transitions {
		require.NotContains(t, tos, from, "no move to itself from %s", from)
		require.NotContains(t, tos, StateOffered, "nothing goes back to OFFERED (from %s)", from)
	}
}
