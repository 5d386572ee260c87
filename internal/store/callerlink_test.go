package store

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A caller's link is one per booking and its moves: every message of
// them carries the same token, which opens the newest of the moves, and
// the store keeps its hash alone.
func TestACallersLinkOpensTheNewestOfTheirMoves(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_first", false)
	token, err := f.store.CallerLink(f.ctx, "req_first", paris("10:30"))
	require.NoError(t, err)
	require.Len(t, token, 22, "128 bits of base64url")
	l, err := f.store.FollowLink(f.ctx, token)
	require.NoError(t, err)
	require.Equal(t, "req_first", l.RequestKey)

	f.booked(t, "req_moved", moving("req_first", intent("paris", agent(0), "16:00", "16:30")))
	again, err := f.store.CallerLink(f.ctx, "req_moved", paris("16:30"))
	require.NoError(t, err)
	require.Equal(t, token, again, "the move's messages carry the first's link")
	l, err = f.store.FollowLink(f.ctx, token)
	require.NoError(t, err)
	require.Equal(t, "req_moved", l.RequestKey)
	require.Equal(t, paris("16:30"), l.ExpiresAt.UTC().In(paris("16:30").Location()))

	var stored, plain int
	hash := sha256.Sum256([]byte(token))
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FILTER (WHERE token_hash = $1),
    count(*) FILTER (WHERE position($2::bytea IN token_hash) > 0) FROM vault.caller_link`, hash[:], []byte(token)).Scan(&stored, &plain))
	require.Equal(t, 1, stored)
	require.Zero(t, plain, "the token itself is nowhere")

	forged := "A" + token[1:]
	if token[0] == 'A' {
		forged = "B" + token[1:]
	}
	_, err = f.store.FollowLink(f.ctx, forged)
	require.ErrorIs(t, err, booking.ErrLinkUnknown, "one character off")
	f.clock.Advance(paris("16:30").Sub(testNow))
	_, err = f.store.FollowLink(f.ctx, token)
	require.ErrorIs(t, err, booking.ErrLinkExpired)
}

// A revoked link opens nothing, and the next message carries a link of
// the next generation; an erased contact takes its links with it, and
// gets no new one.
func TestARevokedOrErasedLinkOpensNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.onFile(t, "req_first", false)
	f.booked(t, "req_moved", moving("req_first", intent("paris", agent(0), "16:00", "16:30")))
	token, err := f.store.CallerLink(f.ctx, "req_moved", paris("16:30"))
	require.NoError(t, err)

	n, err := f.store.RevokeLinks(f.ctx, "req_moved")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = f.store.FollowLink(f.ctx, token)
	require.ErrorIs(t, err, booking.ErrLinkRevoked)
	next, err := f.store.CallerLink(f.ctx, "req_moved", paris("16:30"))
	require.NoError(t, err)
	require.NotEqual(t, token, next)
	l, err := f.store.FollowLink(f.ctx, next)
	require.NoError(t, err)
	require.Equal(t, "req_moved", l.RequestKey)

	require.NoError(t, f.store.EraseContact(f.ctx, "req_moved", "asked"))
	_, err = f.store.FollowLink(f.ctx, next)
	require.ErrorIs(t, err, booking.ErrLinkUnknown)
	_, err = f.store.CallerLink(f.ctx, "req_moved", paris("16:30"))
	require.ErrorIs(t, err, booking.ErrContactErased)
}

// The API's login follows, revokes and (with the contact) erases links;
// the worker's makes them.
func TestTheAPIsLoginMayRevokeLinks(t *testing.T) {
	t.Parallel()
	owner, as := roles(t)
	clock := &clock{t: testNow}
	setupStore := New(owner, Config{Now: clock.Now})
	require.NoError(t, setupStore.SetPolicy(t.Context(), testPolicy))
	for _, r := range []booking.Resource{{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: agent(0), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}} {
		require.NoError(t, setupStore.UpsertResource(t.Context(), r))
	}
	worker := New(as("bookingsaga_worker"), Config{Now: clock.Now})
	api := New(as("bookingsaga_api"), Config{Now: clock.Now})
	sealed, err := worker.SealContact(t.Context(), "req_roles", ada, "Europe/Paris")
	require.NoError(t, err)
	req := commitReq("req_roles", intent("paris", agent(0), "10:00", "10:30"))
	req.Contact = sealed
	_, err = worker.Commit(t.Context(), req)
	require.NoError(t, err)
	token, err := worker.CallerLink(t.Context(), "req_roles", paris("10:30"))
	require.NoError(t, err)
	_, err = api.FollowLink(t.Context(), token)
	require.NoError(t, err)
	n, err := api.RevokeLinks(t.Context(), "req_roles")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, api.EraseContact(t.Context(), "req_roles", "asked"))
	var left int
	require.NoError(t, owner.QueryRow(t.Context(), `SELECT count(*) FROM vault.caller_link`).Scan(&left))
	require.Zero(t, left)
}
