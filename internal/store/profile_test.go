package store

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// An agency's profile is its own: empty until set, refused with nothing
// written when its name is too long for a text or its number is not one
// a caller can dial from anywhere.
func TestAProfileOutOfShapeWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p, err := f.store.Profile(f.ctx)
	require.NoError(t, err)
	require.Equal(t, booking.Profile{}, p)
	good := booking.Profile{Name: "Agence Lumière", Phone: "+33140000000"}
	require.NoError(t, f.store.PutProfile(f.ctx, good))
	for _, bad := range []booking.Profile{{Name: strings.Repeat("é", 61)}, {Name: "Agence", Phone: "01 40 00 00 00"}} {
		var rej *booking.Rejection
		require.ErrorAs(t, f.store.PutProfile(f.ctx, bad), &rej)
		require.Equal(t, booking.CodeInvalidAgency, rej.Code)
	}
	p, err = f.store.Profile(f.ctx)
	require.NoError(t, err)
	require.Equal(t, good, p)
}
