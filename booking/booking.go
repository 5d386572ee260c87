// Package booking holds the vocabulary shared by the store, the saga and the
// agent API: what a caller asks for (Intent), the states a booking moves
// through, and the typed refusals.
package booking

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Status is a booking's state in the store.
type Status string

// A booking is live, and occupies its resources, while held or confirmed.
const (
	StatusHeld                  Status = "held"
	StatusConfirmed             Status = "confirmed"
	StatusCancelled             Status = "cancelled"
	StatusExpired               Status = "expired"
	StatusReleasedForReschedule Status = "released_for_reschedule"
)

// Live reports whether a booking in this status occupies its resources.
func (s Status) Live() bool { return s == StatusHeld || s == StatusConfirmed }

// Known reports whether s is one of the statuses above.
func (s Status) Known() bool {
	return s.Live() || s == StatusCancelled || s == StatusExpired || s == StatusReleasedForReschedule
}

// Limits on input. Keys are opaque but bounded so a misbehaving client can't
// fill the unique index with megabytes.
const (
	MaxKeyLength      = 255
	MaxExtraResources = 8
	MaxDuration       = 12 * time.Hour
)

// Intent is one concrete choice a caller settled on: which resources, when.
// A request_key stands for exactly one Intent.
type Intent struct {
	PropertyID     string    `json:"property_id"`
	AgentID        string    `json:"agent_id"`
	ExtraResources []string  `json:"extra_resources,omitempty"`
	StartsAt       time.Time `json:"starts_at"`
	EndsAt         time.Time `json:"ends_at"`
	TimeZone       string    `json:"time_zone"`
	// Replaces is the request_key of the booking this one reschedules.
	Replaces string `json:"replaces,omitempty"`
	// AgentPool asks for whichever agent of a team is free, in place of
	// AgentID: the commit chooses one, and the booking names it.
	AgentPool string `json:"agent_pool,omitempty"`
}

// CommitRequest asks for one intent to be booked (or held) under its
// request key. It is the one shape of the request through every layer: the
// saga's updates carry it, the commit activity adds the attempt, and the
// store what the calendars said.
type CommitRequest struct {
	// RequestKey is the key the saga is keyed by; an update to a saga may
	// leave it empty.
	RequestKey            string
	Intent                Intent
	ExpectedPolicyVersion string
	// ExpectedZoneRules, when set, is the release of the zone rules the
	// offer's instants were resolved under: the store refuses the commit
	// if its own differ, as it refuses a stale policy.
	ExpectedZoneRules string `json:",omitempty"`
	// ExpectedLocalStart is the local wall time the caller agreed
	// (YYYY-MM-DDTHH:MM in the intent's zone), which the edge resolved to
	// the intent's start under ExpectedZoneRules: a store on another
	// release refuses only when its own rules read it as another instant.
	ExpectedLocalStart string `json:",omitempty"`
	// Hold asks for a hold that expires after the policy's hold TTL
	// instead of a confirmed booking; HoldTTL shortens that TTL for this
	// hold (0, or more than the policy's, is the policy's).
	Hold    bool
	HoldTTL time.Duration `json:",omitempty"`
	Contact *Contact
}

// ValidateKey checks a request_key's shape.
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLength {
		return Rejectf(CodeInvalidRequestKey, "request_key must be 1 to %d characters, got %d", MaxKeyLength, len(key))
	}
	// A key is also its saga's workflow id, which must not collide with
	// the service's other workflows; and "BS-" starts a spoken reference,
	// which the CLI and tools take in the key's place.
	for _, p := range [...]string{ConversationIDPrefix, CatalogIDPrefix, ReconcileRunID + "-", ReferencePrefix, AnonymousPrefix, WebhooksIDPrefix, ReleaseGoneIDPrefix, WithdrawIDPrefix,
		OutcomeIDPrefix, MessagesIDPrefix, AgencyIDPrefix} {
		if strings.HasPrefix(key, p) {
			return Rejectf(CodeInvalidRequestKey, "request_key must not start with %q", p)
		}
	}
	return nil
}

// ValidateReplacement checks that a booking does not name itself as the
// booking it replaces, at commit and at release alike.
func ValidateReplacement(key, replaces string) error {
	if replaces != "" && replaces == key {
		return Rejectf(CodeInvalidReplacement, "request_key %q cannot replace itself", key)
	}
	return nil
}

// Validate checks everything that can be checked without the store.
func (i Intent) Validate() error {
	if err := ValidateAgent(i.AgentID, i.AgentPool); err != nil {
		return err
	}
	agent := i.AgentID
	if i.AgentPool != "" {
		agent = i.AgentPool // a pool's members are checked where they are known
	}
	if err := ValidateResources(i.PropertyID, agent, i.ExtraResources); err != nil {
		return err
	}
	if i.StartsAt.IsZero() || i.EndsAt.IsZero() {
		return Rejectf(CodeMissingField, "starts_at and ends_at are required")
	}
	if !i.EndsAt.After(i.StartsAt) {
		return Rejectf(CodeInvalidTimeRange, "ends_at %s must be after starts_at %s",
			i.EndsAt.Format(time.RFC3339), i.StartsAt.Format(time.RFC3339))
	}
	if d := i.EndsAt.Sub(i.StartsAt); d > MaxDuration {
		return Rejectf(CodeInvalidTimeRange, "duration %s exceeds %s", d, MaxDuration)
	}
	if _, err := localtime.LoadZone(i.TimeZone); err != nil {
		return Rejectf(CodeUnknownTimeZone, "time_zone %q is not an IANA zone", i.TimeZone)
	}
	return nil
}

// Normalize returns the intent as the store keeps it: instants in UTC at
// the database's microsecond precision, so what a caller gets back on the
// first call equals what every later read returns.
func (i Intent) Normalize() Intent {
	i.StartsAt = i.StartsAt.UTC().Truncate(time.Microsecond)
	i.EndsAt = i.EndsAt.UTC().Truncate(time.Microsecond)
	return i
}

// ValidateAgent checks that a request names an agent or a pool, not both.
func ValidateAgent(agentID, pool string) error {
	if agentID != "" && pool != "" {
		return Rejectf(CodeDuplicateResource, "give agent_id or agent_pool, not both")
	}
	return nil
}

// ValidateResources checks the resource ids of an intent or a query.
func ValidateResources(propertyID, agentID string, extras []string) error {
	if propertyID == "" {
		return Rejectf(CodeMissingField, "property_id is required")
	}
	if agentID == "" {
		return Rejectf(CodeMissingField, "agent_id is required")
	}
	if len(extras) > MaxExtraResources {
		return Rejectf(CodeTooManyResources, "at most %d extra resources, got %d", MaxExtraResources, len(extras))
	}
	seen := map[string]bool{propertyID: true}
	for _, r := range append([]string{agentID}, extras...) {
		if r == "" {
			return Rejectf(CodeMissingField, "resource ids must not be empty")
		}
		if seen[r] {
			return Rejectf(CodeDuplicateResource, "resource %q is named twice", r)
		}
		seen[r] = true
	}
	return nil
}

// SameTimeAndPlace reports whether o is a viewing of the same property at
// the same times: a move from one to the other changed at most who shows
// it (a reassignment), which the caller is told as that, not as a move,
// and which the notice does not hold back.
func (i Intent) SameTimeAndPlace(o Intent) bool {
	return i.PropertyID == o.PropertyID && i.StartsAt.Equal(o.StartsAt) && i.EndsAt.Equal(o.EndsAt)
}

// Resources lists every resource the intent occupies, in the intent's order
// (property, agent, extras).
// An intent for a pool names no agent until the commit has chosen one.
func (i Intent) Resources() []string {
	if i.AgentID == "" {
		return append([]string{i.PropertyID}, i.ExtraResources...)
	}
	return append([]string{i.PropertyID, i.AgentID}, i.ExtraResources...)
}

// Fingerprint identifies the intent, so a reused request_key can be told
// from a retried one. Extras are order-insensitive; instants are compared as
// instants, whatever offset they were written with.
func (i Intent) Fingerprint() []byte {
	h := sha256.New()
	field := func(s string) {
		_ = binary.Write(h, binary.BigEndian, uint32(len(s)))
		h.Write([]byte(s))
	}
	field(i.PropertyID)
	field(i.AgentID)
	extras := slices.Clone(i.ExtraResources)
	slices.Sort(extras)
	_ = binary.Write(h, binary.BigEndian, uint32(len(extras)))
	for _, e := range extras {
		field(e)
	}
	_ = binary.Write(h, binary.BigEndian, i.StartsAt.UnixNano())
	_ = binary.Write(h, binary.BigEndian, i.EndsAt.UnixNano())
	field(i.TimeZone)
	field(i.Replaces)
	if i.AgentPool != "" {
		// Only when set: every fingerprint stored before pools stays valid.
		field("pool:" + i.AgentPool)
	}
	return h.Sum(nil)
}

// Booking is a booking as the store holds it.
type Booking struct {
	BookingID            uuid.UUID  `json:"booking_id"`
	RequestKey           string     `json:"request_key"`
	Status               Status     `json:"status"`
	Intent               Intent     `json:"intent"`
	PolicyVersion        string     `json:"policy_version"`
	HoldExpiresAt        *time.Time `json:"hold_expires_at,omitempty"`
	ProviderEventID      string     `json:"provider_event_id,omitempty"`
	CRMRef               string     `json:"crm_ref,omitempty"`
	ReplacedByRequestKey string     `json:"replaced_by,omitempty"`
	CreatedAt            time.Time  `json:"created_at"`
	CommittedAt          *time.Time `json:"committed_at,omitempty"`
	ReleasedAt           *time.Time `json:"released_at,omitempty"`
	// LocalStart is the start the caller was told, as wall time
	// (YYYY-MM-DDTHH:MM) in Intent.TimeZone, and ZoneRules the IANA
	// release that resolved it to Intent.StartsAt. A booking follows a
	// later release that maps LocalStart elsewhere (Store.FollowZoneRules).
	LocalStart string `json:"local_start,omitempty"`
	ZoneRules  string `json:"zone_rules,omitempty"`
	// RemindAt is when the caller is reminded of the viewing, by the
	// policy it was confirmed under; nil is no reminder.
	RemindAt *time.Time `json:"remind_at,omitempty"`
	// Outcome is how the viewing went, once staff recorded it.
	Outcome Outcome `json:"outcome,omitempty"`
	// ReconfirmedAt is when the caller replied to the reminder that they
	// are coming; nil is no such reply.
	ReconfirmedAt *time.Time `json:"reconfirmed_at,omitempty"`
}

// MirrorsAlike says whether the calendar and CRM copies of b and o are the
// same: the mirrors show a booking's status, slot, resources and outcome.
// Mirror references and timestamps are the mirrors' own news, not a change
// to copy.
func (b Booking) MirrorsAlike(o Booking) bool {
	x, y := b.Intent, o.Intent
	return b.Status == o.Status && b.Outcome == o.Outcome &&
		x.PropertyID == y.PropertyID && x.AgentID == y.AgentID && slices.Equal(x.ExtraResources, y.ExtraResources) &&
		x.StartsAt.Equal(y.StartsAt) && x.EndsAt.Equal(y.EndsAt) && x.TimeZone == y.TimeZone
}
