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
	Reason      string     `json:"reason"`
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
	}
	return nil
}
