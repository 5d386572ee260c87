package booking

import (
	"errors"
)

// Contact is the caller's personal data, kept apart from the booking and
// purged at its retention deadline. It travels and rests sealed: the API
// seals it under the booking's own data key before it enters Temporal
// (Sealed, with the plain fields empty), and only the store, holding the
// key, opens it. Sagas of the release before carry it in plain text.
type Contact struct {
	Name  string `json:"name,omitempty"`
	Phone string `json:"phone,omitempty"`
	Email string `json:"email,omitempty"`
	// Notify is the channel the caller agreed to be written to on:
	// ChannelSMS, ChannelEmail, or none. It is sealed with the rest.
	Notify Channel `json:"notify,omitempty"`
	// Lang is the language the booking was made in (en, fr, zh): its
	// messages are written in it.
	Lang string `json:"lang,omitempty"`
	// Sealed is the contact's JSON, AES-256-GCM under its data key.
	Sealed []byte `json:"sealed,omitempty"`
}

// ErrContactErased means a contact was erased, on request or at its
// retention deadline: its data key is gone for good.
var ErrContactErased = errors.New("contact erased")

// ErrNoContact means the store holds no contact for a key: no booking yet,
// or none was given.
var ErrNoContact = errors.New("no contact stored for this request_key")

// HasPlain reports whether c carries any detail in plain text.
func (c *Contact) HasPlain() bool {
	return c != nil && (c.Name != "" || c.Phone != "" || c.Email != "" || c.Notify != "")
}

// SealedBox is c's sealed form, or nil.
func (c *Contact) SealedBox() []byte {
	if c == nil {
		return nil
	}
	return c.Sealed
}
