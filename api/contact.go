package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
)

// ContactVault reads and erases callers' contacts, which rest sealed under
// a data key per booking; the store implements it.
type ContactVault interface {
	Contact(ctx context.Context, key string) (booking.Contact, error)
	EraseContact(ctx context.Context, key, reason string) error
}

// ContactAnswer is a booking's contact, or the fact of its erasure.
type ContactAnswer struct {
	RequestKey string           `json:"request_key"`
	Contact    *booking.Contact `json:"contact,omitempty"`
	Erased     bool             `json:"erased"`
	ErasedAt   *time.Time       `json:"erased_at,omitempty"`
}

// contact answers the contact a caller gave with a booking: for the
// agency to call them back, until retention or an erasure removes it.
func (s *Server) contact(w http.ResponseWriter, r *http.Request) error {
	key, err := s.contactKey(r)
	if err != nil {
		return err
	}
	c, err := s.cfg.Contacts.Contact(r.Context(), key)
	if err != nil {
		return contactError(err)
	}
	return edge.WriteJSON(w, http.StatusOK, ContactAnswer{RequestKey: key, Contact: &c})
}

// eraseContact erases a booking's contact on the caller's request: its
// data key is deleted, which leaves every copy (the saga's history, the
// store, backups without the key) unreadable. The booking stands.
func (s *Server) eraseContact(w http.ResponseWriter, r *http.Request) error {
	key, err := s.contactKey(r)
	if err != nil {
		return err
	}
	if err := s.cfg.Contacts.EraseContact(r.Context(), key, "request"); err != nil {
		return contactError(err)
	}
	at := s.set.Now().UTC()
	return edge.WriteJSON(w, http.StatusOK, ContactAnswer{RequestKey: key, Erased: true, ErasedAt: &at})
}

func (s *Server) contactKey(r *http.Request) (string, error) {
	if s.cfg.Contacts == nil {
		return "", &edge.Error{Status: http.StatusNotImplemented, Code: string(booking.CodeUnavailable),
			Message: "this API has no store connection for contacts (start it with a database URL)"}
	}
	key := r.PathValue("request_key")
	if err := booking.ValidateKey(key); err != nil {
		return "", edge.FromRejection(err)
	}
	return key, nil
}

func contactError(err error) error {
	switch {
	case errors.Is(err, booking.ErrContactErased):
		return &edge.Error{Status: http.StatusGone, Code: string(booking.CodeContactErased), Message: "this booking's contact was erased"}
	case errors.Is(err, booking.ErrNoContact):
		return &edge.Error{Status: http.StatusNotFound, Code: string(booking.CodeNoContact), Message: "no contact is stored under this request_key"}
	}
	return err
}
