package booking

import (
	"strings"
	"time"
)

// Fact is one thing an admin approved to be said about a property: a
// caller's question on its topic is answered with Answer, and only then.
// Whatever no approved fact covers is not answered by the tools but
// offered to a person.
type Fact struct {
	// Topic is what the fact answers, a word or two ("parking", "floor",
	// "pets"): the tools match it case-insensitively.
	Topic  string `json:"topic"`
	Answer string `json:"answer"`
	// Source is where it comes from (the lease, the listing, the landlord's
	// e-mail of a date), and ApprovedAt when an admin approved it.
	Source     string    `json:"source"`
	ApprovedAt time.Time `json:"approved_at"`
	// ApprovedBy is the admin key that wrote it: the writer is the
	// approver (there is no second reviewer), named by the key, never by
	// the body.
	ApprovedBy string `json:"approved_by,omitempty"`
}

// MaxFacts bounds a property's facts.
const MaxFacts = 50

// validateFacts checks a resource's facts: on properties only, each with
// its topic, answer, source and approval, topics unique.
func validateFacts(kind string, facts []Fact) error {
	if len(facts) == 0 {
		return nil
	}
	if kind != "property" {
		return Rejectf(CodeInvalidResource, "facts are a property's; a %s has none", kind)
	}
	if len(facts) > MaxFacts {
		return Rejectf(CodeInvalidResource, "at most %d facts, got %d", MaxFacts, len(facts))
	}
	seen := map[string]bool{}
	for i, f := range facts {
		topic := FactTopic(f.Topic)
		switch {
		case topic == "" || len(topic) > 60:
			return Rejectf(CodeInvalidResource, "facts[%d].topic must be 1 to 60 characters", i)
		case seen[topic]:
			return Rejectf(CodeInvalidResource, "facts[%d]: topic %q is given twice", i, f.Topic)
		case strings.TrimSpace(f.Answer) == "" || len(f.Answer) > 500:
			return Rejectf(CodeInvalidResource, "facts[%d].answer must be 1 to 500 characters", i)
		case strings.TrimSpace(f.Source) == "" || len(f.Source) > 200:
			return Rejectf(CodeInvalidResource, "facts[%d].source must say where the fact comes from, in at most 200 characters", i)
		case f.ApprovedAt.IsZero():
			return Rejectf(CodeInvalidResource, "facts[%d].approved_at is required", i)
		}
		seen[topic] = true
	}
	return nil
}

// FactTopic is a topic as facts are matched by: trimmed, lower case, one
// space between words.
func FactTopic(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// FactOn is the approved fact on topic, if there is one.
func (r Resource) FactOn(topic string) (Fact, bool) {
	want := FactTopic(topic)
	for _, f := range r.Facts {
		if FactTopic(f.Topic) == want {
			return f, true
		}
	}
	return Fact{}, false
}
