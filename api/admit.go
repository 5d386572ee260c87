package api

import (
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
)

// budgeted runs a booking route within the commit wait and a margin,
// whatever is frozen, once admitted. One not admitted is answered at once
// with a retryable 503 and no receipt: the call changed nothing, and a
// booking its key made before may stand.
func (s *Server) budgeted(h func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.cfg.Admission.Enter() {
			s.cfg.Metrics.Counter("booking_calls_shed_total").Inc(1)
			return booking.ErrOverloaded
		}
		defer func(start time.Time) { s.cfg.Admission.Done(time.Since(start)) }(time.Now())
		ctx, cancel := s.client.Bound(r.Context())
		defer cancel()
		return h(w, r.WithContext(ctx))
	}
}
