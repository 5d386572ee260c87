// Package staff serves what the agency's staff record on a booking after
// it is made: how the viewing went, and which agent shows it. Its routes
// are mounted on the API (edge.Server.Mount) behind admin keys; the work is
// the saga client's, which a worker carries out, since the API's database
// role writes no booking.
package staff

import (
	"context"
	"net/http"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Sagas are the saga client's calls the routes make
// (*desk.Desk).
type Sagas interface {
	RecordOutcome(ctx context.Context, in booking.OutcomeInput) (booking.OutcomeOutput, error)
	Reassign(ctx context.Context, key, agent string) (receipt.Receipt, error)
}

// Routes serves the staff's routes.
type Routes struct{ sagas Sagas }

// maxBody bounds the routes' bodies: an outcome's note is the longest
// field (booking.MaxOutcomeNote characters).
const maxBody = 8 << 10

// New serves sagas' calls.
func New(sagas Sagas) *Routes { return &Routes{sagas: sagas} }

// Routes are the routes to mount.
func (s *Routes) Routes() []edge.Route {
	return []edge.Route{
		{Method: "POST", Path: "/v1/bookings/{request_key}/outcome", Scope: apikey.ScopeAdmin, Handle: s.outcome},
		{Method: "POST", Path: "/v1/bookings/{request_key}/reassign", Scope: apikey.ScopeAdmin, Handle: s.reassign},
	}
}

// OutcomeBody is POST /v1/bookings/{request_key}/outcome.
type OutcomeBody struct {
	Outcome booking.Outcome `json:"outcome"`
	Note    string          `json:"note,omitempty"`
}

// OutcomeAnswer is the booking's outcome as recorded. Changed is false
// when the booking had that outcome already (the same call sent again).
type OutcomeAnswer struct {
	RequestKey string          `json:"request_key"`
	Outcome    booking.Outcome `json:"outcome"`
	Changed    bool            `json:"changed"`
	// Reminded says whether the caller was sent a reminder before it.
	Reminded bool `json:"reminded"`
}

func (s *Routes) outcome(w http.ResponseWriter, r *http.Request) error {
	var body OutcomeBody
	if e := edge.Decode(r.Body, maxBody, &body); e != nil {
		return e
	}
	out, err := s.sagas.RecordOutcome(r.Context(), booking.OutcomeInput{
		RequestKey: r.PathValue("request_key"), Outcome: body.Outcome, Note: body.Note})
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, OutcomeAnswer{RequestKey: out.Booking.RequestKey,
		Outcome: out.Booking.Outcome, Changed: out.Changed, Reminded: out.Reminded})
}

// ReassignBody is POST /v1/bookings/{request_key}/reassign.
type ReassignBody struct {
	AgentID string `json:"agent_id"`
}

// reassign answers the new booking's receipt, which replaces the one
// moved: a conflict (the new agent is busy then) leaves the booking as it
// was, as a reschedule's does.
func (s *Routes) reassign(w http.ResponseWriter, r *http.Request) error {
	var body ReassignBody
	if e := edge.Decode(r.Body, maxBody, &body); e != nil {
		return e
	}
	rec, err := s.sagas.Reassign(r.Context(), r.PathValue("request_key"), body.AgentID)
	if err != nil {
		return err
	}
	return edge.WriteReceipt(w, receipt.OnWire(rec))
}
