package api

import (
	"context"
	"net/http"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// Agencies makes and lists the deployment's agencies, for a platform
// key; the store implements it.
type Agencies interface {
	PutAgency(ctx context.Context, id, name string) (a agency.Agency, created bool, err error)
	Agencies(ctx context.Context) ([]agency.Named, error)
}

// AgencyBody is PUT /v1/agencies/{id}.
type AgencyBody struct {
	// Name is what the platform calls the agency; its own lists show it.
	Name string `json:"name"`
}

// AgencyAnswer is one agency. Its keys name it by id ("agency" in the
// keys file): a call never names its agency itself.
type AgencyAnswer struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AgencyList is GET /v1/agencies.
type AgencyList struct {
	Agencies []AgencyAnswer `json:"agencies"`
}

func (s *Server) putAgency(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Agencies == nil {
		return noAgencies
	}
	var body AgencyBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	a, created, err := s.cfg.Agencies.PutAgency(r.Context(), r.PathValue("id"), body.Name)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return edge.WriteJSON(w, status, AgencyAnswer{ID: a.ID, Name: body.Name})
}

func (s *Server) listAgencies(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Agencies == nil {
		return noAgencies
	}
	all, err := s.cfg.Agencies.Agencies(r.Context())
	if err != nil {
		return err
	}
	out := AgencyList{Agencies: []AgencyAnswer{}}
	for _, a := range all {
		out.Agencies = append(out.Agencies, AgencyAnswer{ID: a.ID, Name: a.Name})
	}
	return edge.WriteJSON(w, http.StatusOK, out)
}

var noAgencies = &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
	Message: "this API has no store connection for agencies"}
