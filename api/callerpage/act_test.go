package callerpage

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// A change answered pending is named by its own reference in the notice;
// the booking the page shows keeps its own, as the store holds it.
func TestAPendingChangeIsNamedBesideTheBookingThatStands(t *testing.T) {
	t.Parallel()
	p := New(nil, edge.Settings{}, Config{})
	v := visit{sp: speech.Speaker{Lang: speech.English}, booking: booking.Booking{RequestKey: "req-old", Status: booking.StatusConfirmed,
		Intent: booking.Intent{StartsAt: time.Now().Add(-time.Hour), EndsAt: time.Now().Add(time.Hour), TimeZone: "Europe/Paris"}}}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v/x", nil)
	require.NoError(t, p.answer(w, r, v, "move", receipt.Receipt{Status: receipt.StatusPending, RequestKey: "req-new"}, nil))
	require.Equal(t, http.StatusAccepted, w.Code)
	body := w.Body.String()
	require.Regexp(t, regexp.MustCompile(`class="notice"[^<]*`+receipt.Reference("req-new")), body, "the pending change's reference")
	require.Regexp(t, regexp.MustCompile(`id="reference">Reference `+receipt.Reference("req-old")), body, "the booking that stands")
}
