package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// The operator's lists are bounded: a flood of drift flags or hand-offs
// (a stuck mirror, a caller asking again and again) answers the oldest
// MaxOpen of each, not a read of every row on every attention call.
func TestOpenFlagsAndHandoffsAreBounded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for i := range MaxOpen + 5 {
		_, err := f.store.FlagDrift(f.ctx, booking.Flag{RequestKey: fmt.Sprint("k-", i), Kind: "store_lost_booking", Detail: "lost"})
		require.NoError(t, err)
	}
	flags, err := f.store.OpenFlags(f.ctx)
	require.NoError(t, err)
	require.Equal(t, MaxOpen, len(flags))
	for i := range MaxOpen + 5 {
		_, _, err := f.store.RequestHandoff(f.ctx, booking.Handoff{ConversationID: fmt.Sprint("c-", i), Topic: "advice", Reason: "a question"})
		require.NoError(t, err)
	}
	open, err := f.store.OpenHandoffs(f.ctx)
	require.NoError(t, err)
	require.Equal(t, MaxOpen, len(open))
}
