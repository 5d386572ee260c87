package api

import (
	"cmp"
	"encoding/json"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// namedKey is the request_key a booking call names: a move's new key, a
// booking's, or the one in its path; none for an intent, whose key the
// service makes.
func namedKey(r *http.Request) string {
	var body struct {
		RequestKey    string `json:"request_key"`
		NewRequestKey string `json:"new_request_key"`
	}
	if raw, err := edge.Buffer(r); err == nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, &body)
	}
	return cmp.Or(body.NewRequestKey, body.RequestKey, r.PathValue("request_key"))
}

// budgeted runs a booking route within the commit wait and a margin,
// whatever is frozen, once admitted. One not admitted is answered at once
// with a retryable 503 naming its key and no receipt: the call changed
// nothing, and a booking its key made before may stand.
func (s *Server) budgeted(h func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		caller := edge.Admitted(r.Context())
		if !s.set.Admission.Enter(caller) {
			s.set.Shed(r.Context())
			e, _ := edge.Classify(booking.ErrOverloaded)
			e.RequestKey = namedKey(r)
			return e
		}
		defer func(start time.Time) { s.set.Admission.Done(caller, time.Since(start)) }(time.Now())
		ctx, cancel := s.client.Bound(r.Context())
		defer cancel()
		return h(w, r.WithContext(ctx))
	}
}
