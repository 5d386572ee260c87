package booking

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// The records the store keeps and every layer shares: bookings, resources,
// policies, contacts, availability, busy ranges, drift flags, the event log
// and the decisions on keys. internal/store is their PostgreSQL home;
// nothing here knows about PostgreSQL.

// Outcomes of a decision that booked nothing.
const (
	RefusedConflict = "conflict"
	RefusedRejected = "rejected"
	// RefusedExpired is an intent that lapsed before anyone committed it.
	RefusedExpired = "expired"
)

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
}

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
	// Rules are its own hours, time off, notice, horizon and limits; nil
	// is the policy's alone.
	Rules *Rules `json:"rules,omitempty"`
	// Facts are what may be said about a property (property_info).
	Facts []Fact `json:"facts,omitempty"`
}

func (r Resource) Validate() error {
	switch {
	case len(r.DisplayName) > 200:
		return Rejectf(CodeInvalidResource, "display_name must be at most 200 characters")
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

// Policy is one version of the booking rules.
type Policy struct {
	Version                    string
	SlotMinutes                int
	DefaultBufferBeforeMinutes int
	DefaultBufferAfterMinutes  int
	// OpensAt and ClosesAt bound bookable hours, as offsets from local
	// midnight in each property's own zone.
	OpensAt, ClosesAt time.Duration
	HoldTTL           time.Duration
	MinNotice         time.Duration
	// HorizonDays is how far ahead a booking may start; 0 is no limit.
	HorizonDays int
}

func (p Policy) Validate() error {
	switch {
	case p.Version == "" || len(p.Version) > 100:
		return Rejectf(CodeInvalidPolicy, "version must be 1 to 100 characters")
	case p.SlotMinutes < 5 || p.SlotMinutes > 1440:
		return Rejectf(CodeInvalidPolicy, "slot_minutes must be 5 to 1440")
	case p.DefaultBufferBeforeMinutes < 0 || p.DefaultBufferBeforeMinutes > 1440 ||
		p.DefaultBufferAfterMinutes < 0 || p.DefaultBufferAfterMinutes > 1440:
		return Rejectf(CodeInvalidPolicy, "buffers must be 0 to 1440 minutes")
	case p.OpensAt < 0 || p.ClosesAt > 24*time.Hour-time.Minute || p.ClosesAt <= p.OpensAt ||
		p.OpensAt%time.Minute != 0 || p.ClosesAt%time.Minute != 0:
		return Rejectf(CodeInvalidPolicy, "bookable hours must be whole minutes with opens before closes within one day")
	case p.HoldTTL < time.Second || p.HoldTTL > 24*time.Hour || p.HoldTTL%time.Second != 0:
		return Rejectf(CodeInvalidPolicy, "hold_ttl must be whole seconds from 1s to 24h")
	case p.MinNotice < 0 || p.MinNotice%time.Minute != 0:
		return Rejectf(CodeInvalidPolicy, "min_notice must be whole minutes, not negative")
	case p.HorizonDays < 0 || p.HorizonDays > 3660:
		return Rejectf(CodeInvalidPolicy, "horizon_days must be 0 (none) to 3660")
	}
	return nil
}

// WithinHours reports whether [start, end) lies within bookable hours on one
// local day in loc.
func (p Policy) WithinHours(start, end time.Time, loc *time.Location) bool {
	h := Wall(start, end, loc)
	return h.SameDay && time.Duration(h.Start)*time.Second >= p.OpensAt && time.Duration(h.End)*time.Second <= p.ClosesAt
}

// WallHours is a span's local start and end as whole seconds since local
// midnight, and whether both fall on the same local day.
type WallHours struct {
	SameDay    bool
	Start, End int
}

func Wall(start, end time.Time, loc *time.Location) WallHours {
	ls, le := start.In(loc), end.In(loc)
	secs := func(t time.Time) int { h, m, s := t.Clock(); return h*3600 + m*60 + s }
	y, m, d := ls.Date()
	ey, em, ed := le.Date()
	return WallHours{SameDay: y == ey && m == em && d == ed, Start: secs(ls), End: secs(le)}
}

func (p Policy) Hours() string {
	clock := func(d time.Duration) string { return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60) }
	return clock(p.OpensAt) + "–" + clock(p.ClosesAt)
}

// Contact is the caller's personal data, kept apart from the booking and
// purged at its retention deadline. It travels and rests sealed: the API
// seals it under the booking's own data key before it enters Temporal
// (Sealed, with the plain fields empty), and only the store, holding the
// key, opens it. Sagas of the release before carry it in plain text.
type Contact struct {
	Name  string `json:"name,omitempty"`
	Phone string `json:"phone,omitempty"`
	Email string `json:"email,omitempty"`
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
	return c != nil && (c.Name != "" || c.Phone != "" || c.Email != "")
}

// SealedBox is c's sealed form, or nil.
func (c *Contact) SealedBox() []byte {
	if c == nil {
		return nil
	}
	return c.Sealed
}

// Busy is a resource at capacity, and the window in which it is.
type Busy struct {
	ResourceID string    `json:"resource_id"`
	Capacity   int       `json:"capacity"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
}

// AvailabilityQuery asks for free slots for a set of resources.
type AvailabilityQuery struct {
	PropertyID string
	AgentID    string
	// AgentPool, in place of AgentID, offers a slot when any member is
	// free.
	AgentPool string
	// Blocked, when set, reports whether the calendars show any of a set
	// of resources busy over a slot (events written past the service); a
	// slot is offered only with a set it does not block.
	Blocked        func(start, end time.Time, resourceIDs []string) bool `json:"-"`
	ExtraResources []string
	From, To       time.Time
	// Duration defaults to the policy's slot length.
	Duration time.Duration
}

// Availability is a snapshot of candidate slots: an offer, not a promise.
// Only Commit decides.
type Availability struct {
	PolicyVersion string `json:"policy_version"`
	// ZoneRules is the release of the zone rules the slots' instants
	// were resolved under; a booking may pass it back as
	// expected_zone_rules.
	ZoneRules  string    `json:"zone_rules"`
	SnapshotAt time.Time `json:"snapshot_at"`
	TimeZone   string    `json:"time_zone"`
	Slots      []Slot    `json:"slots"`
}

// Slot is one free start time.
type Slot struct {
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	LocalStart string    `json:"local_start"`
}

// Span is a half-open interval [Start, End), like tstzrange's default: a
// booking's time, or what it occupies with its buffers.
type Span struct {
	Start, End time.Time
}

// Cursor is a position in BookingsStarting's order.
type Cursor struct {
	StartsAt   time.Time
	RequestKey string
}

// ListQuery filters a listing of bookings: those starting in [From, To),
// of a property, an agent and a status when given, one page of at most
// Limit after the cursor.
type ListQuery struct {
	PropertyID, AgentID string
	From, To            time.Time
	Status              Status
	After               Cursor
	Limit               int
}

// Validate refuses a listing that cannot be answered in one page.
func (q *ListQuery) Validate(maxWindow time.Duration, maxPage int) error {
	switch {
	case !q.To.After(q.From) || q.To.Sub(q.From) > maxWindow:
		return Rejectf(CodeInvalidWindow, "from must be before to, at most %d days apart", int(maxWindow.Hours()/24))
	case q.Limit < 0 || q.Limit > maxPage:
		return Rejectf(CodeInvalidWindow, "limit must be 1 to %d", maxPage)
	case q.Status != "" && !q.Status.Known():
		return Rejectf(CodeInvalidWindow, "status %q is not a booking status", q.Status)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	return nil
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

// OutsideRules is a confirmed booking that its resource's hours or time
// off no longer allow.
type OutsideRules struct {
	RequestKey string    `json:"request_key"`
	ResourceID string    `json:"resource_id"`
	StartsAt   time.Time `json:"starts_at"`
	Reason     string    `json:"reason"`
}

// ResourceCalendar is a resource that has a calendar.
type ResourceCalendar struct {
	ResourceID string
	Provider   string
	CalendarID string
}

// Flag is drift a human has to look at.
type Flag struct {
	ID         int64      `json:"id"`
	RequestKey string     `json:"request_key"`
	BookingID  uuid.UUID  `json:"booking_id"`
	Kind       string     `json:"kind"`
	CalendarID string     `json:"calendar_id"`
	EventID    string     `json:"event_id"`
	Detail     string     `json:"detail"`
	FoundAt    time.Time  `json:"found_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Note       string     `json:"note,omitempty"`
}

// Event is one entry of a booking's append-only log.
type Event struct {
	Kind       string    `json:"kind"`
	Detail     string    `json:"detail"`
	OccurredAt time.Time `json:"occurred_at"`
}

// Refusal is a decision on a request_key that booked nothing: a conflict
// or a refusal decided under the commit's locks, or a lapsed intent. It is
// kept for good, and replayed to every later request under the key.
type Refusal struct {
	RequestKey    string    `json:"request_key"`
	Outcome       string    `json:"outcome"`
	Code          Code      `json:"code"`
	Message       string    `json:"message"`
	Busy          []Busy    `json:"busy,omitempty"`
	Intent        Intent    `json:"intent"`
	PolicyVersion string    `json:"policy_version"`
	DecidedAt     time.Time `json:"decided_at"`
}

// Err is the refusal as the commit returns it: a conflict outcome, or a
// *Rejection.
func (r Refusal) Err() error {
	if r.Outcome == RefusedConflict {
		return nil
	}
	return &Rejection{Code: r.Code, Message: r.Message}
}

// Decision is everything the store decided on one request_key: exactly one
// of Booking and Refusal is set.
type Decision struct {
	Booking *Booking `json:"booking,omitempty"`
	Refusal *Refusal `json:"refusal,omitempty"`
}

// MirrorRecord is where a booking was mirrored. Empty fields are left as
// they are.
type MirrorRecord struct {
	RequestKey      string
	ProviderEventID string
	CRMRef          string
}

// knownKind reports the kinds of resource a booking can use.
func knownKind(kind string) bool {
	switch kind {
	case "property", "agent", "key_holder", "room", "other":
		return true
	}
	return false
}

// WebhookEndpoint is a registered webhook receiver.
type WebhookEndpoint struct {
	ID           string     `json:"id"`
	URL          string     `json:"url"`
	Secret       []byte     `json:"-"`
	DeliveredAt  *time.Time `json:"delivered_at,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Undelivered  int        `json:"undelivered"`
	Paused       bool       `json:"paused,omitempty"`
}

// ErrNoEndpoint means no webhook endpoint has the id.
var ErrNoEndpoint = errors.New("no such webhook endpoint")

// ErrNotFound means the store authoritatively has no booking for the key.
var ErrNotFound = errors.New("booking not found")
