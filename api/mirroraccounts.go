package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// MirrorAccounts are the agency's accounts at its mirrors, for its admin
// key (the store implements it): its calendars', CRMs', Twilio's and
// SMTP server's credentials, by kind (booking.AccountKinds). They are
// written and never answered back.
type MirrorAccounts interface {
	MirrorAccountsSet(ctx context.Context) ([]string, error)
	PutMirrorAccount(ctx context.Context, kind string, settings []byte) error
	DeleteMirrorAccount(ctx context.Context, kind string) error
}

// MirrorAccountList is GET /v1/mirrors: which kinds of account the agency
// set, never their credentials.
type MirrorAccountList struct {
	Set []string `json:"set"`
}

func (s *Server) listMirrorAccounts(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.MirrorAccounts == nil {
		return noAccounts
	}
	set, err := s.cfg.MirrorAccounts.MirrorAccountsSet(r.Context())
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, MirrorAccountList{Set: append([]string{}, set...)})
}

// putMirrorAccount checks the account as the worker will build it, and
// refuses it, writing nothing, unless it would: a field missing, one
// unknown, an address inside the deployment's network.
func (s *Server) putMirrorAccount(w http.ResponseWriter, r *http.Request) error {
	kind, e := s.accountKind(r)
	if e != nil {
		return e
	}
	var body json.RawMessage
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	if err := s.cfg.CheckAccount(r.Context(), kind, body); err != nil {
		return edge.BadRequest(booking.CodeInvalidRequest, "%v", err)
	}
	if err := s.cfg.MirrorAccounts.PutMirrorAccount(r.Context(), kind, body); err != nil {
		return err
	}
	return s.listMirrorAccounts(w, r)
}

func (s *Server) deleteMirrorAccount(w http.ResponseWriter, r *http.Request) error {
	kind, e := s.accountKind(r)
	if e != nil {
		return e
	}
	if err := s.cfg.MirrorAccounts.DeleteMirrorAccount(r.Context(), kind); err != nil {
		return err
	}
	return s.listMirrorAccounts(w, r)
}

// accountKind is the path's kind, one of booking.AccountKinds.
func (s *Server) accountKind(r *http.Request) (string, *edge.Error) {
	if s.cfg.MirrorAccounts == nil || s.cfg.CheckAccount == nil {
		return "", noAccounts
	}
	k := r.PathValue("kind")
	if !slices.Contains(booking.AccountKinds, k) {
		return "", &edge.Error{Status: http.StatusNotFound, Code: string(booking.CodeNotFound),
			Message: "no account kind " + k + "; kinds are " + strings.Join(booking.AccountKinds, ", ")}
	}
	return k, nil
}

var noAccounts = &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
	Message: "this API has no store connection for mirror accounts"}
