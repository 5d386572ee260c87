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

// A conversation has one open hand-off per topic: a new reason (a model
// rewording it, a caller adding a detail) updates it rather than adding
// one and a delivery to every receiver; and the delivery carries the
// hand-off's id and topic, never the caller's words.
func TestAHandoffIsOnePerConversationAndTopic(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, _, err := f.store.PutEndpoint(f.ctx, "crm", "https://receiver.example.test/hook")
	require.NoError(t, err)
	first, created, err := f.store.RequestHandoff(f.ctx, booking.Handoff{ConversationID: "c-1", Topic: "advice", Reason: "Can I bring my dog?"})
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := f.store.RequestHandoff(f.ctx, booking.Handoff{ConversationID: "c-1", Topic: "advice", Reason: "Is a large dog allowed, and is there a garden?"})
	require.NoError(t, err)
	require.False(t, created, "the same conversation and topic")
	require.Equal(t, first.ID, again.ID)
	open, err := f.store.OpenHandoffs(f.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, "Is a large dog allowed, and is there a garden?", open[0].Reason, "the latest words")
	var deliveries int
	var payload string
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*), max(payload::text) FROM webhook_delivery WHERE event_type = 'handoff.requested'`).Scan(&deliveries, &payload))
	require.Equal(t, 1, deliveries, "one delivery per hand-off")
	require.NotContains(t, payload, "dog", "the caller's words stay in the store")
	require.Contains(t, payload, `"topic": "advice"`)
}
