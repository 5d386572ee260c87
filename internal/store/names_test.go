package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

// A resource's names by language are kept with it and read back whole, and
// the spoken lines' cache reads each resource's names as the lines use
// them: by tag, with display_name under "" for every other language.
func TestDisplayNamesByLanguageAreKept(t *testing.T) {
	t.Parallel()
	f := setup(t)
	flat := booking.Resource{ID: "marais", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris", DisplayName: "the Marais flat",
		CalendarID: "marais@calendar.test", DisplayNames: map[string]string{"fr": "l'appartement du Marais", "zh": "玛黑区公寓"}}
	require.NoError(t, f.store.UpsertResource(f.ctx, flat))
	got, err := f.store.Resource(f.ctx, "marais")
	require.NoError(t, err)
	require.Equal(t, flat.DisplayNames, got.DisplayNames)
	// The commit's calendar re-check reads resources whole, by position.
	withCalendars, err := f.store.CalendarResources(f.ctx)
	require.NoError(t, err)
	require.Len(t, withCalendars, 1)
	require.Equal(t, flat.DisplayNames, withCalendars[0].DisplayNames)
	all, err := f.store.AllDisplayNames(f.ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"": "the Marais flat", "fr": "l'appartement du Marais", "zh": "玛黑区公寓"}, all["marais"])

	flat.DisplayNames = nil
	require.NoError(t, f.store.UpsertResource(f.ctx, flat))
	all, err = f.store.AllDisplayNames(f.ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"": "the Marais flat"}, all["marais"], "names taken away are gone")

	flat.DisplayNames = map[string]string{"fr": ""}
	requireCode(t, f.store.UpsertResource(f.ctx, flat), booking.CodeInvalidResource)
}
