package booking

import (
	"slices"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Resource is anything a viewing occupies: a property, an agent, a key holder.
type Resource struct {
	ID                  string `json:"id"`
	Kind                string `json:"kind"`
	Capacity            int    `json:"capacity"`
	TimeZone            string `json:"time_zone"`
	BufferBeforeMinutes int    `json:"buffer_before_minutes"`
	BufferAfterMinutes  int    `json:"buffer_after_minutes"`
	CalendarID          string `json:"calendar_id,omitempty"`
	// CalendarProvider says whose calendar CalendarID names: "google" (a
	// Google calendar id, the default) or "microsoft" (a Microsoft 365
	// user's or room's mailbox). See Provider.
	CalendarProvider string `json:"calendar_provider,omitempty"`
	// DisplayName is the name a caller hears; the voice tools speak it in
	// place of the id.
	DisplayName string `json:"display_name,omitempty"`
	// DisplayNames are the name in other languages, by tag (fr, zh), where
	// the agency gives them; a line in a language without one says
	// DisplayName.
	DisplayNames map[string]string `json:"display_names,omitempty"`
	// Address is where a property's viewings are, its address or meeting
	// point, as the caller's messages and invitation give it; Addresses
	// are it in other languages, by tag, as DisplayNames.
	Address   string            `json:"address,omitempty"`
	Addresses map[string]string `json:"addresses,omitempty"`
	// Rules are its own hours, time off, notice, horizon and limits; nil
	// is the policy's alone.
	Rules *Rules `json:"rules,omitempty"`
	// Facts are what may be said about a property (property_info).
	Facts []Fact `json:"facts,omitempty"`
	// CRM is the CRM of the property's agency, where its viewings are
	// mirrored: "http" (the generic one) or "hubspot"; empty is the
	// deployment's default (-crm).
	CRM string `json:"crm,omitempty"`
}

// CRMs are the CRMs a property may name.
var CRMs = []string{"http", "hubspot"}

// SpokenNames are the resource's names as the spoken lines read them: by
// language tag, with DisplayName under "" for every other language.
func (r Resource) SpokenNames() map[string]string {
	out := map[string]string{}
	for lang, name := range r.DisplayNames {
		out[lang] = name
	}
	if r.DisplayName != "" {
		out[""] = r.DisplayName
	}
	return out
}

// SpokenAddresses are the resource's address as the messages give it:
// by language tag, with Address under "" for every other language.
func (r Resource) SpokenAddresses() map[string]string {
	out := map[string]string{}
	for lang, a := range r.Addresses {
		out[lang] = a
	}
	if r.Address != "" {
		out[""] = r.Address
	}
	return out
}

// NameIn is the resource's display name in lang, else its default; ""
// when the agency gave none.
func (r Resource) NameIn(lang string) string { return inLang(r.SpokenNames(), lang) }

// AddressIn is the resource's address in lang, else its default; ""
// when the agency gave none.
func (r Resource) AddressIn(lang string) string { return inLang(r.SpokenAddresses(), lang) }

func inLang(by map[string]string, lang string) string {
	if v := by[lang]; v != "" {
		return v
	}
	return by[""]
}

func (r Resource) Validate() error {
	for lang, name := range r.DisplayNames {
		if lang == "" || len(name) == 0 || len(name) > 200 {
			return Rejectf(CodeInvalidResource, "display_names[%q] must be a language tag with a name of 1 to 200 characters", lang)
		}
	}
	for lang, a := range r.Addresses {
		if lang == "" || len(a) == 0 || len(a) > 300 {
			return Rejectf(CodeInvalidResource, "addresses[%q] must be a language tag with an address of 1 to 300 characters", lang)
		}
	}
	if len(r.Address) > 300 || len(r.Addresses) > 8 {
		return Rejectf(CodeInvalidResource, "address is at most 300 characters, addresses at most 8 languages")
	}
	switch {
	case len(r.DisplayName) > 200:
		return Rejectf(CodeInvalidResource, "display_name must be at most 200 characters")
	case len(r.DisplayNames) > 8:
		return Rejectf(CodeInvalidResource, "display_names holds at most 8 languages, got %d", len(r.DisplayNames))
	case r.ID == "" || len(r.ID) > MaxKeyLength:
		return Rejectf(CodeInvalidResource, "id must be 1 to %d characters", MaxKeyLength)
	case !knownKind(r.Kind):
		return Rejectf(CodeInvalidResource, "kind %q is not one of property, agent, key_holder, room, other", r.Kind)
	case r.Capacity < 1:
		return Rejectf(CodeInvalidResource, "capacity must be at least 1, got %d", r.Capacity)
	case r.BufferBeforeMinutes < 0 || r.BufferBeforeMinutes > 1440 || r.BufferAfterMinutes < 0 || r.BufferAfterMinutes > 1440:
		return Rejectf(CodeInvalidResource, "buffers must be 0 to 1440 minutes")
	case r.CalendarProvider != "" && r.CalendarID == "":
		return Rejectf(CodeInvalidResource, "calendar_provider %q names no calendar: set calendar_id too", r.CalendarProvider)
	case r.CRM != "" && (r.Kind != "property" || !slices.Contains(CRMs, r.CRM)):
		return Rejectf(CodeInvalidResource, "crm %q: a property's agency CRM is http or hubspot (empty: the default)", r.CRM)
	case r.CalendarProvider != "" && r.CalendarProvider != ProviderGoogle && r.CalendarProvider != ProviderMicrosoft:
		return Rejectf(CodeInvalidResource, "calendar_provider %q is not one of google, microsoft", r.CalendarProvider)
	case len(r.CalendarID) > 320:
		return Rejectf(CodeInvalidResource, "calendar_id must be at most 320 characters")
	}
	loc, err := localtime.LoadZone(r.TimeZone)
	if err != nil {
		return Rejectf(CodeUnknownTimeZone, "time_zone %q is not an IANA zone", r.TimeZone)
	}
	if err := validateFacts(r.Kind, r.Facts); err != nil {
		return err
	}
	return r.Rules.Validate(loc)
}

// The calendar providers a resource's calendar can live in.
const (
	ProviderGoogle    = "google"
	ProviderMicrosoft = "microsoft"
)

// Provider is the provider of the resource's calendar: Google unless it
// says otherwise, and none without a calendar.
func (r Resource) Provider() string {
	switch {
	case r.CalendarID == "":
		return ""
	case r.CalendarProvider == "":
		return ProviderGoogle
	}
	return r.CalendarProvider
}

// WatchedResource is a capacity-1 resource with a calendar, and the times
// of its bookings that may have an event of ours there.
type WatchedResource struct {
	Resource
	Ours []Span
}

// Pool is a named team of agents a booking may ask for instead of one.
type Pool struct {
	ID      string   `json:"id"`
	Members []string `json:"members"`
}

// MaxPoolMembers bounds a pool: the commit locks every member.
const MaxPoolMembers = 50

// Validate checks a pool's shape; that its members are agents is the
// store's to check.
func (p Pool) Validate() error {
	switch {
	case p.ID == "" || len(p.ID) > MaxKeyLength:
		return Rejectf(CodeInvalidResource, "pool id must be 1 to %d characters", MaxKeyLength)
	case len(p.Members) == 0:
		return Rejectf(CodeEmptyPool, "pool %s has no members", p.ID)
	case len(p.Members) > MaxPoolMembers:
		return Rejectf(CodeTooManyResources, "a pool has at most %d members, got %d", MaxPoolMembers, len(p.Members))
	}
	seen := map[string]bool{}
	for _, m := range p.Members {
		if m == "" || seen[m] {
			return Rejectf(CodeDuplicateResource, "pool members must be distinct, non-empty agent ids")
		}
		seen[m] = true
	}
	return nil
}

// ResourceCalendar is a resource that has a calendar.
type ResourceCalendar struct {
	ResourceID string
	Provider   string
	CalendarID string
}

// knownKind reports the kinds of resource a booking can use.
func knownKind(kind string) bool {
	switch kind {
	case "property", "agent", "key_holder", "room", "other":
		return true
	}
	return false
}
