// Package speech words receipts as the lines a voice agent reads to a
// caller: from the receipt's status alone, with the resources' display
// names and a spoken date and time, never an id, an offset or a UUID. The
// lines come from one message table per language.
package speech

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Lang is a language the lines come in.
type Lang string

// The languages of the tables.
const (
	English Lang = "en"
	Chinese Lang = "zh" // Simplified Chinese
	French  Lang = "fr"
)

// ParseLang reads a BCP 47 tag ("en", "en-GB", "fr", "fr-FR", "zh", "zh-CN", "zh-Hans");
// empty is English.
func ParseLang(tag string) (Lang, error) {
	base, _, _ := strings.Cut(strings.ToLower(strings.ReplaceAll(tag, "_", "-")), "-")
	switch base {
	case "", "en":
		return English, nil
	case "zh", "cmn":
		return Chinese, nil
	case "fr":
		return French, nil
	}
	return "", fmt.Errorf("language %q has no lines; use en, fr or zh", tag)
}

// FromAcceptLanguage is the language of the lines a browser's
// Accept-Language header prefers most (RFC 9110 12.5.4), English when it
// names none of theirs.
func FromAcceptLanguage(header string) Lang {
	best, bestQ := English, -1.0
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if lang, err := ParseLang(tag); err == nil && tag != "" && q > 0 && q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}

// Speaker words receipts in one language.
type Speaker struct {
	Lang Lang
	// Names are resources' display names by id; a resource without one is
	// "the property" or "the agent", never its id.
	Names map[string]string
	// Address is where the viewing is, in Lang where the agency gave it
	// (booking.Resource.SpokenAddresses); the caller's messages and
	// invitation carry it. Empty leaves it out.
	Address string
	// Agency signs the caller's messages and Phone is the number they call
	// back (booking.Profile); Link opens their own page, where they change
	// or cancel the booking. Each empty is left out.
	Agency, Phone, Link string
	// Free are other free times a message about a booking refused offers
	// ("Free instead: …"); none leaves the line out.
	Free []time.Time
}

// Receipt is the line for r, chosen by its status alone: only a confirmed
// receipt is worded as a booking.
func (s Speaker) Receipt(r receipt.Receipt) string {
	when := s.word("requested_time")
	if r.StartsAt != nil {
		when = s.When(*r.StartsAt, r.TimeZone)
	}
	v := map[string]string{"when": when, "reference": receipt.Reference(r.RequestKey),
		"property": s.name(r.PropertyRef, "the_property"), "agent": s.name(r.AgentRef, "the_agent")}
	if r.Reference != "" {
		v["reference"] = r.Reference
	}
	key := string(r.Status)
	switch r.Status {
	case receipt.StatusConflict:
		if len(r.Alternatives) == 0 {
			key = "conflict_none"
		}
		v["alternatives"] = s.alternatives(r)
	case receipt.StatusRejected:
		switch {
		case r.Reason != nil && r.Reason.Retryable:
			key = "rejected_retry"
		case len(r.Alternatives) > 0: // a refusal of the time itself
			key = "rejected_alternatives"
			v["alternatives"] = s.alternatives(r)
		}
		v["reason"] = s.reason(r.Reason)
	case receipt.StatusConfirmed, receipt.StatusPending, receipt.StatusHeld, receipt.StatusCancelled,
		receipt.StatusExpired, receipt.StatusRescheduled, receipt.StatusReassigned:
	default:
		key = "nothing"
	}
	return s.render(key, v)
}

func (s Speaker) alternatives(r receipt.Receipt) string {
	alts := make([]string, 0, len(r.Alternatives))
	for _, a := range r.Alternatives {
		alts = append(alts, s.When(a.StartsAt, r.TimeZone))
	}
	return strings.Join(alts, s.word("list_sep"))
}

// Readback is what select_slot answers: the resolved date, time and zone,
// for the agent to read back and have confirmed before it books.
func (s Speaker) Readback(propertyID string, start time.Time, zone string) string {
	return s.render("readback", map[string]string{"property": s.name(propertyID, "the_property"), "when": s.When(start, zone)})
}

// Found is find_booking's line for one booking found by caller ID: its
// time and property, and nothing else of it (not its reference: caller ID
// is no proof of who calls).
func (s Speaker) Found(propertyID string, start time.Time, zone string) string {
	return s.render("found", map[string]string{"property": s.name(propertyID, "the_property"), "when": s.When(start, zone)})
}

// NoFact is property_info's line when no approved fact answers.
func (s Speaker) NoFact(propertyID string) string {
	return s.render("no_fact", map[string]string{"property": s.name(propertyID, "the_property")})
}

// Handoff is request_human's line once the request is recorded.
func (s Speaker) Handoff() string { return s.word("handoff") }

func (s Speaker) name(id, fallback string) string {
	if n := s.Names[id]; n != "" {
		return n
	}
	return s.word(fallback)
}

func (s Speaker) reason(r *receipt.Reason) string {
	if r == nil {
		return s.word("reason_default")
	}
	if line, ok := tables[s.Lang][reasonKey(booking.Code(r.Code))]; ok {
		return line
	}
	return s.word("reason_default")
}

func (s Speaker) word(key string) string { return s.render(key, nil) }

// render fills a table line's {placeholders}.
func (s Speaker) render(key string, v map[string]string) string {
	line, ok := tables[s.Lang][key]
	if !ok {
		line = tables[English][key]
	}
	pairs := make([]string, 0, 2*len(v))
	for k, val := range v {
		pairs = append(pairs, "{"+k+"}", val)
	}
	return strings.NewReplacer(pairs...).Replace(line)
}
