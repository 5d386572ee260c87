package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// types lists the endpoint's deliveries' types, oldest first.
func (f *fixture) types(t *testing.T, id string) []string {
	t.Helper()
	due, err := f.store.Due(f.ctx, id, 100)
	require.NoError(t, err)
	var out []string
	for _, d := range due {
		out = append(out, d.Type)
	}
	return out
}

func TestTheEventLogFeedsEveryEndpoint(t *testing.T) {
	t.Parallel()
	f := setup(t)
	secret, created, err := f.store.PutEndpoint(f.ctx, "backend", "https://backend.example.test/hooks")
	require.NoError(t, err)
	require.True(t, created)
	require.Len(t, secret, 32)
	again, created, err := f.store.PutEndpoint(f.ctx, "backend", "https://backend.example.test/hooks2")
	require.NoError(t, err)
	require.False(t, created)
	require.Nil(t, again, "the secret is shown once")

	_, err = f.store.Commit(f.ctx, commitReq("req_a", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	_, err = f.store.Commit(f.ctx, commitReq("req_b", intent("paris", agent(1), "10:00", "10:30")))
	require.NoError(t, err) // a conflict
	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "req_a"})
	require.NoError(t, err)
	require.Equal(t, []string{"booking.confirmed", "booking.refused", "booking.cancelled"}, f.types(t, "backend"))

	due, err := f.store.Due(f.ctx, "backend", 1)
	require.NoError(t, err)
	require.NoError(t, f.store.Delivered(f.ctx, "backend", due[0].ID))
	require.Equal(t, []string{"booking.refused", "booking.cancelled"}, f.types(t, "backend"), "a delivered one is not due again")
}

// A key answered pending settles with one booking.settled, whether its
// decision comes after the mark or before it, however often it is marked.
func TestAPendingKeySettlesOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, _, err := f.store.PutEndpoint(f.ctx, "backend", "https://backend.example.test/hooks")
	require.NoError(t, err)

	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_late"}))
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_late"}))
	_, err = f.store.Commit(f.ctx, commitReq("req_late", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_late"}))

	_, err = f.store.Commit(f.ctx, commitReq("req_first", intent("paris", agent(1), "12:00", "12:30")))
	require.NoError(t, err)
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_first"}))
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_first"}))

	require.Equal(t, []string{"booking.confirmed", "booking.settled", "booking.confirmed", "booking.settled"}, f.types(t, "backend"))
}

func TestDeliveredWebhooksGoAfterAWeek(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, _, err := f.store.PutEndpoint(f.ctx, "backend", "https://backend.example.test/hooks")
	require.NoError(t, err)
	_, err = f.store.Commit(f.ctx, commitReq("req_a", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err)
	_, err = f.store.Commit(f.ctx, commitReq("req_b", intent("paris", agent(1), "11:00", "11:30")))
	require.NoError(t, err)
	due, err := f.store.Due(f.ctx, "backend", 1)
	require.NoError(t, err)
	require.NoError(t, f.store.Delivered(f.ctx, "backend", due[0].ID))
	f.clock.Advance(8 * 24 * time.Hour)
	_, err = f.store.ApplyRetention(f.ctx, 100)
	require.NoError(t, err)
	var left int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM webhook_delivery").Scan(&left))
	require.Equal(t, 1, left, "the delivered one goes; the undelivered one waits for its receiver")
}

// TestAWebhookSecretRestsSealedAndRotates: the secret in the endpoint row
// is ciphertext, opened only with the vault's data key; a rotation answers
// a new one, which the endpoint then reads back; pause and delete act on
// an endpoint that exists and say so of one that does not.
func TestAWebhookSecretRestsSealedAndRotates(t *testing.T) {
	t.Parallel()
	f := setup(t)
	secret, created, err := f.store.PutEndpoint(f.ctx, "crm", "https://hooks.example.com/bookings")
	require.NoError(t, err)
	require.True(t, created)
	var stored []byte
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT secret FROM webhook_endpoint WHERE endpoint_id = 'crm'").Scan(&stored))
	require.NotContains(t, string(stored), string(secret), "the row holds no plain secret")
	ep, err := f.store.Endpoint(f.ctx, "crm")
	require.NoError(t, err)
	require.Equal(t, secret, ep.Secret)

	rotated, err := f.store.RotateSecret(f.ctx, "crm")
	require.NoError(t, err)
	require.NotEqual(t, secret, rotated)
	ep, err = f.store.Endpoint(f.ctx, "crm")
	require.NoError(t, err)
	require.Equal(t, rotated, ep.Secret)
	_, err = f.store.RotateSecret(f.ctx, "nobody")
	require.ErrorIs(t, err, booking.ErrNoEndpoint)

	require.NoError(t, f.store.PauseEndpoint(f.ctx, "crm", true))
	eps, err := f.store.Endpoints(f.ctx)
	require.NoError(t, err)
	require.True(t, eps[0].Paused)
	require.Nil(t, eps[0].Secret, "listings carry no secret")
	require.NoError(t, f.store.PauseEndpoint(f.ctx, "crm", false))
	ep, err = f.store.Endpoint(f.ctx, "crm")
	require.NoError(t, err)
	require.False(t, ep.Paused)

	require.NoError(t, f.store.DeleteEndpoint(f.ctx, "crm"))
	_, err = f.store.Endpoint(f.ctx, "crm")
	require.ErrorIs(t, err, booking.ErrNoEndpoint)
	require.ErrorIs(t, f.store.DeleteEndpoint(f.ctx, "crm"), booking.ErrNoEndpoint)
	require.ErrorIs(t, f.store.PauseEndpoint(f.ctx, "crm", true), booking.ErrNoEndpoint)
	var keys int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM vault.webhook_key").Scan(&keys))
	require.Zero(t, keys, "the data key goes with the endpoint")
}
