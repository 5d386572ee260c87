package booking_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
)

func TestNextPageGoesOnAfterAFullPageOnly(t *testing.T) {
	t.Parallel()
	at := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	page := []booking.Booking{
		{RequestKey: "a", Intent: booking.Intent{StartsAt: at}},
		{RequestKey: "b", Intent: booking.Intent{StartsAt: at.Add(time.Hour)}},
	}
	require.Equal(t, &booking.Cursor{StartsAt: at.Add(time.Hour), RequestKey: "b"}, booking.NextPage(page, 2))
	require.Nil(t, booking.NextPage(page, 3), "a short page is the last")
	require.Nil(t, booking.NextPage(nil, 2), "an empty page is the last")
	require.Nil(t, booking.NextPage(page, 0), "an unlimited listing has one page")
}
