package booking

import (
	"slices"
	"strings"
	"time"
)

// Handoff is a caller's request for a person: a question the tools must
// not answer (suitability, eligibility, professional advice), a fact not
// on record, or a booking problem. It holds what a callback needs and
// nothing more.
type Handoff struct {
	ID             int64  `json:"id"`
	ConversationID string `json:"conversation_id"`
	// Topic is the kind of question (HandoffTopics).
	Topic string `json:"topic"`
	// Reason is the caller's stated reason, in their words, and no other
	// free text.
	Reason string `json:"reason"`
	// Callback is the number a person calls the caller back on, and when
	// they would like it: sealed with the reason, erased with the
	// contact, shown to operators only. HasCallback says there is one
	// without showing it (webhooks, the hand-off's own answer).
	Callback    *Callback  `json:"callback,omitempty"`
	HasCallback bool       `json:"has_callback_number"`
	RequestKeys []string   `json:"request_keys"`
	RequestedAt time.Time  `json:"requested_at"`
	ResolvedAt  *time.Time `json:"resolved_at,omitempty"`
	Note        string     `json:"note,omitempty"`
}

// HandoffTopics are the kinds of question a handoff is for.
var HandoffTopics = []string{"suitability", "eligibility", "advice", "property", "booking", "other"}

// Validate checks a handoff as asked for.
func (h Handoff) Validate() error {
	switch {
	case h.ConversationID == "" || len(h.ConversationID) > MaxKeyLength:
		return Rejectf(CodeMissingField, "a handoff needs its call's id")
	case !slices.Contains(HandoffTopics, h.Topic):
		return Rejectf(CodeMissingField, "topic %q is not one of %s", h.Topic, strings.Join(HandoffTopics, ", "))
	case strings.TrimSpace(h.Reason) == "" || len(h.Reason) > 300:
		return Rejectf(CodeMissingField, "reason, the caller's own words, must be 1 to 300 characters")
	case h.Callback != nil:
		return h.Callback.Validate()
	}
	return nil
}

// Callback is where and when a person calls a caller back.
type Callback struct {
	// Number is the caller ID, or a number the caller gave, in E.164
	// where it could be read as one.
	Number string `json:"number"`
	// Window is when the caller would like the call, in their words
	// ("weekday mornings"); it may be empty.
	Window string `json:"window,omitempty"`
}

// Validate checks a callback: a number of 6 to 15 digits (E.164's most),
// written with digits, spaces and + ( ) - . only, and a short window.
func (c Callback) Validate() error {
	digits := 0
	for _, r := range c.Number {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case !strings.ContainsRune("+ ()-.", r):
			return Rejectf(CodeInvalidContact, "callback_number may hold digits, spaces and + ( ) - . only")
		}
	}
	switch {
	case digits < 6 || digits > 15:
		return Rejectf(CodeInvalidContact, "callback_number needs 6 to 15 digits")
	case len(c.Window) > 100:
		return Rejectf(CodeMissingField, "callback_window must be at most 100 characters")
	}
	return nil
}
