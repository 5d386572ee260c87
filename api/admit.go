package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// budgeted runs a booking route within the commit wait and a margin,
// whatever is frozen, once admitted. One not admitted is answered at once:
// a call making a key (a booking, an intent, a move's new key) with that
// key's receipt, rejected and retryable; a read or a cancel of a booking
// that may stand with no receipt, which could contradict the store.
func (s *Server) budgeted(h func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.cfg.Admission.Enter() {
			s.cfg.Metrics.Counter("booking_calls_shed_total").Inc(1)
			if r.Method == http.MethodGet || strings.HasSuffix(r.URL.Path, "/cancel") {
				return booking.ErrOverloaded
			}
			var body struct {
				RequestKey    string `json:"request_key"`
				NewRequestKey string `json:"new_request_key"`
			}
			if raw, err := buffer(r); err == nil {
				_ = json.Unmarshal(raw, &body)
			}
			return s.answer(w, r, cmp.Or(body.NewRequestKey, body.RequestKey), receipt.Receipt{}, booking.ErrOverloaded)
		}
		defer func(start time.Time) { s.cfg.Admission.Done(time.Since(start)) }(time.Now())
		ctx, cancel := s.client.Bound(r.Context())
		defer cancel()
		return h(w, r.WithContext(ctx))
	}
}
