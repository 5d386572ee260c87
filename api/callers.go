package api

// What an agency's callers see of it: its profile, which signs their
// messages, and the links to their own pages.

import (
	"context"
	"net/http"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// Profiles reads and sets the agency as its callers see it; the store
// implements it.
type Profiles interface {
	Profile(ctx context.Context) (booking.Profile, error)
	PutProfile(ctx context.Context, p booking.Profile) error
}

var noProfiles = &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
	Message: "this API has no store connection for the agency's profile"}

// ProfileBody is PUT and GET /v1/profile.
type ProfileBody struct {
	// Name signs the callers' texts and e-mails.
	Name string `json:"name"`
	// CallbackPhone is the number they call back, in E.164 form.
	CallbackPhone string `json:"callback_phone"`
}

// putProfile is PUT /v1/profile: the name the callers' messages are
// signed with and the number they call back.
func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Profiles == nil {
		return noProfiles
	}
	var body ProfileBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	if err := s.cfg.Profiles.PutProfile(r.Context(), booking.Profile{Name: body.Name, Phone: body.CallbackPhone}); err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, body)
}

func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Profiles == nil {
		return noProfiles
	}
	p, err := s.cfg.Profiles.Profile(r.Context())
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, ProfileBody{Name: p.Name, CallbackPhone: p.Phone})
}

// Links revokes the links to a caller's page; the store implements it.
type Links interface {
	RevokeLinks(ctx context.Context, key string) (int, error)
}

// LinksRevoked is DELETE /v1/bookings/{request_key}/link.
type LinksRevoked struct {
	// Revoked is how many links stopped opening the page; the caller's
	// next message carries a new one.
	Revoked int `json:"revoked"`
}

// revokeLinks revokes the links to the page of the booking's caller, of
// the booking and its moves (a link forwarded, a phone lost).
func (s *Server) revokeLinks(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Links == nil {
		return &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
			Message: "this API has no store connection for the callers' links"}
	}
	n, err := s.cfg.Links.RevokeLinks(r.Context(), r.PathValue("request_key"))
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, LinksRevoked{Revoked: n})
}
