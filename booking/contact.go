package booking

import (
	"errors"
	"regexp"
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
	// KeepOnFile is the caller's yes to the agency keeping them on file:
	// only then does the CRM hold them as a contact, with the viewing on
	// it. It is sealed with the rest.
	KeepOnFile bool `json:"keep_on_file,omitempty"`
	// By names the API key the booking was asked under: its texts count
	// against that key's hourly cap. It is sealed with the rest.
	By string `json:"by,omitempty"`
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
	return c != nil && (c.Name != "" || c.Phone != "" || c.Email != "" || c.Notify != "" || c.KeepOnFile)
}

// SealedBox is c's sealed form, or nil.
func (c *Contact) SealedBox() []byte {
	if c == nil {
		return nil
	}
	return c.Sealed
}

// OnFile is a caller the agency may keep in its CRM: the contact, the
// request key it is stored under (a reschedule's booking has its
// caller's), and the CRM contact linked to it before (zero: none).
type OnFile struct {
	OwnerKey string
	Contact  Contact
	Linked   CRMContact
}

// CRMContact is the CRM contact linked to the caller of a request key:
// the CRM's name ("" the default) and its id for the contact.
type CRMContact struct {
	RequestKey string
	CRM        string
	ContactRef string
	// Created is set for a contact the service made: the only kind an
	// erasure deletes. One it found (the agency's) is unlinked instead.
	Created bool
	// Records are the CRM records (meetings) of the caller's bookings,
	// their moves included, for an unlink.
	Records []string
}

var (
	// As written, or escaped in a URL's query (%40, %2B): a provider's
	// error quotes the URL it called.
	emailLike = regexp.MustCompile(`[^\s@<>"'(),;:&=?/]+(@|%40)[^\s@<>"'(),;:&=?/]+`)
	phoneLike = regexp.MustCompile(`(\+|%2B)[\d\s().-]{6,}\d`)
)

// Scrub takes the e-mail addresses and international phone numbers out
// of text a provider or a mirror answered (an error message, say), so
// that it may be stored and shown to staff: a caller's contact lives in
// the vault alone.
func Scrub(text string) string {
	return phoneLike.ReplaceAllString(emailLike.ReplaceAllString(text, "[email]"), "[phone]")
}
