package edge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Error is an HTTP error answer: a stable code a program matches on, and
// a message a developer understands.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Candidates are the instants a DST-ambiguous or -nonexistent local
	// time could mean, for the caller to choose from.
	Candidates []time.Time `json:"candidates,omitempty"`
	// Retryable means the same call may be sent again as it is: every
	// 5xx and 429 says so.
	Retryable bool `json:"retryable,omitempty"`
	// RetryAfter, on a 429, is when the caller may try again.
	RetryAfter time.Duration `json:"-"`
	// RequestKey, on a booking call not sent, is the key it named: the
	// same call goes again with it.
	RequestKey string `json:"request_key,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// BadRequest is a 400 with code.
func BadRequest(code booking.Code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: string(code), Message: fmt.Sprintf(format, args...)}
}

// FromRejection is a rejection of the input as a 400 with its code.
func FromRejection(err error) *Error {
	var rej *booking.Rejection
	if errors.As(err, &rej) {
		return BadRequest(rej.Code, "%s", rej.Message)
	}
	return BadRequest(booking.CodeMissingField, "%v", err)
}

// Classify is the edge's one reading of an error, for the REST routes and
// the voice tools alike: the answer it is (an *Error with its status and
// code), or technical, a failure of the system rather than an answer about
// the request, which the edge answers as retryable and logs.
//
//   - an *Error is itself;
//   - a call held back by an earlier pending booking is 409
//     earlier_booking_pending;
//   - a store refusal is 400 when its code says the input was at fault
//     (booking.Code.Input), else 409;
//   - a key neither Temporal nor the store knows is 404;
//   - a call not sent because too many are in flight is 503, retryable
//     after a second: shed by design, not a failure.
func Classify(err error) (e *Error, technical bool) {
	var rej *booking.Rejection
	var held *receipt.HeldError
	switch {
	case errors.As(err, &e):
		return e, false
	case errors.As(err, &held):
		return &Error{Status: http.StatusConflict, Code: string(booking.CodeEarlierPending),
			Message: fmt.Sprintf("an earlier booking of this conversation (request_key %s, reference %s) is not settled: check it with GET /v1/bookings/{request_key} first",
				held.Earlier.RequestKey, held.Earlier.Reference)}, false
	case errors.As(err, &rej):
		e = BadRequest(rej.Code, "%s", rej.Message)
		if !rej.Code.Input() {
			e.Status = http.StatusConflict
		}
		return e, false
	case errors.Is(err, booking.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: string(booking.CodeNotFound), Message: "no booking under this request_key"}, false
	case errors.Is(err, booking.ErrOverloaded):
		return &Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable), RetryAfter: shedRetry(),
			Message: "bookingsaga is at capacity: this call was not sent and changed nothing; send the same call again in a moment"}, false
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable),
		Message: "bookingsaga could not answer now; retry with the same request_key"}, true
}

// writeError answers err as Classify reads it; a technical failure is
// logged.
func writeError(w http.ResponseWriter, log *zap.Logger, err error) {
	e, technical := Classify(err)
	if technical {
		log.Error("request failed", zap.Error(err))
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfter(e.RetryAfter))
	}
	if e.Status >= 500 || e.Status == http.StatusTooManyRequests {
		e.Retryable = true
	}
	_ = WriteJSON(w, e.Status, e)
}

// shedRetry is the wait a call not admitted is told: one second or two,
// at random, so that the retries of a burst shed together come back
// spread over two seconds, not as the same burst again.
func shedRetry() time.Duration { return time.Duration(1+rand.IntN(2)) * time.Second }
