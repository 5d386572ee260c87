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

// A hand-off's reason is the caller's words: it rests sealed under a data
// key of its own, staff read it opened, and erasing the contact of a
// booking it names erases the words too, for good.
func TestAHandoffsReasonRestsSealedAndIsErasedWithTheContact(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.sealedCommit(t, "req_words", "10:00", "10:30")
	words := "My daughter uses a wheelchair: is there a lift?"
	h, _, err := f.store.RequestHandoff(f.ctx, booking.Handoff{ConversationID: "c-words", Topic: "suitability", Reason: words, RequestKeys: []string{"req_words"}})
	require.NoError(t, err)
	var plain *string
	var box []byte
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT reason, reason_sealed FROM handoff WHERE handoff_id = $1", h.ID).Scan(&plain, &box))
	require.Nil(t, plain, "no plain words at rest")
	require.NotContains(t, string(box), "wheelchair")
	open, err := f.store.OpenHandoffs(f.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, words, open[0].Reason, "staff read the words")

	require.NoError(t, f.store.EraseContact(f.ctx, "req_words", "the caller asked"))
	open, err = f.store.OpenHandoffs(f.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1, "the hand-off stays, for the callback")
	require.Empty(t, open[0].Reason, "its words are gone")
	var keys int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM vault.handoff_key WHERE data_key IS NOT NULL").Scan(&keys))
	require.Zero(t, keys)
	resolved, err := f.store.ResolveHandoff(f.ctx, h.ID, "called back")
	require.NoError(t, err)
	require.Empty(t, resolved.Reason)
}
