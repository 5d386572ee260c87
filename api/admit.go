package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// budgeted runs a booking route within one booking call's budget, the
// commit wait and a margin, whatever it reads or asks before the call:
// every booking route answers within it, whatever is frozen. Each asks
// Temporal, so each is admitted first; one not admitted is answered at
// once, not sent, with the key it named (in its path or its body).
func (s *Server) budgeted(h func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.cfg.Admission.Enter() {
			var body struct {
				RequestKey string `json:"request_key"`
			}
			if raw, err := buffer(r); err == nil {
				_ = json.Unmarshal(raw, &body)
			}
			return s.answer(w, r, cmp.Or(r.PathValue("request_key"), body.RequestKey), receipt.Receipt{}, booking.ErrOverloaded)
		}
		defer func(start time.Time) { s.cfg.Admission.Done(time.Since(start)) }(time.Now())
		ctx, cancel := s.client.Bound(r.Context())
		defer cancel()
		return h(w, r.WithContext(ctx))
	}
}
