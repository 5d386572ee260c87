package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A platform secret is kept a little while, and that it is none as well:
// this process's own writes are seen at once, another process's once the
// time has passed.
func TestAPlatformSecretIsKeptALittleWhile(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := New(f.pool, Config{Now: f.clock.Now}) // another API process
	_, err := f.store.PlatformSecret(f.ctx, "retell")
	require.ErrorIs(t, err, booking.ErrNotFound)

	require.NoError(t, other.PutPlatformSecret(f.ctx, "retell", "retell-key-0123456789"))
	_, err = f.store.PlatformSecret(f.ctx, "retell")
	require.ErrorIs(t, err, booking.ErrNotFound, "another process's secret, within the time kept")
	f.clock.Advance(secretsFor)
	got, err := f.store.PlatformSecret(f.ctx, "retell")
	require.NoError(t, err)
	require.Equal(t, "retell-key-0123456789", got, "seen once the time has passed")

	require.NoError(t, f.store.PutPlatformSecret(f.ctx, "retell", "retell-key-rotated-0123"))
	got, err = f.store.PlatformSecret(f.ctx, "retell")
	require.NoError(t, err)
	require.Equal(t, "retell-key-rotated-0123", got, "this process's own write, at once")
	require.NoError(t, f.store.DeletePlatformSecret(f.ctx, "retell"))
	_, err = f.store.PlatformSecret(f.ctx, "retell")
	require.ErrorIs(t, err, booking.ErrNotFound, "a removal, at once")
	set, err := f.store.PlatformsSet(f.ctx)
	require.NoError(t, err)
	require.Empty(t, set)
}
