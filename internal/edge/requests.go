package edge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Decode reads one JSON object of at most limit bytes, refusing unknown
// fields (a misspelt field must not be silently ignored) and trailing data.
func Decode(r io.Reader, limit int64, v any) *Error {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || int64(len(data)) > limit {
		return BadRequest(booking.CodeBodyTooLarge, "body is over %d bytes", limit)
	}
	if err != nil {
		return BadRequest(booking.CodeBadJSON, "body could not be read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest(booking.CodeBadJSON, "body is not the expected JSON object: %s", JSONProblem(err))
	}
	if dec.More() {
		return BadRequest(booking.CodeBadJSON, "body has data after the JSON object")
	}
	return nil
}

// jsonProblem says what is wrong with a body in the caller's terms, the
// field and the JSON type wanted, never Go's names for them.
func JSONProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		return fmt.Sprintf("%s should be %s, not %s", field, jsonKind(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the JSON ends early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

// Slot is how a request names resources and a time: an instant with its
// offset (starts_at), or a local wall time (local_start) in time_zone; and
// a length (duration_minutes) or an end (ends_at).
type Slot struct {
	PropertyID string `json:"property_id"`
	AgentID    string `json:"agent_id,omitempty"`
	// AgentPool asks for whichever agent of a team is free (agent_id may
	// then be left out, or be "any"); the receipt names the one booked.
	AgentPool       string   `json:"agent_pool,omitempty"`
	ExtraResources  []string `json:"extra_resources,omitempty"`
	StartsAt        string   `json:"starts_at,omitempty"`
	LocalStart      string   `json:"local_start,omitempty"`
	TimeZone        string   `json:"time_zone"`
	DurationMinutes int      `json:"duration_minutes,omitempty"`
	EndsAt          string   `json:"ends_at,omitempty"`
	// ExpectedZoneRules is the zone_rules an availability answer gave
	// with starts_at: the store refuses the offer if its rules are now
	// another release's. A local_start is resolved here, under ours.
	ExpectedZoneRules string `json:"expected_zone_rules,omitempty"`
}

// AnyAgent, as agent_id beside agent_pool, means whoever of the team is
// free: the same as leaving agent_id out.
const AnyAgent = "any"

// Intent resolves the slot to instants. It never guesses: a local time in
// a DST gap or overlap is refused with both candidate instants.
func (s Slot) Intent(now time.Time) (booking.Intent, *Error) {
	if s.AgentID == AnyAgent && s.AgentPool != "" {
		s.AgentID = ""
	}
	switch {
	case s.PropertyID == "" || s.AgentID == "" && s.AgentPool == "":
		return booking.Intent{}, BadRequest(booking.CodeMissingField, "property_id, and agent_id or agent_pool, are required")
	case s.TimeZone == "":
		return booking.Intent{}, BadRequest(booking.CodeMissingField, "time_zone (the property's IANA zone) is required")
	case (s.StartsAt == "") == (s.LocalStart == ""):
		return booking.Intent{}, BadRequest(booking.CodeMissingField, "give exactly one of starts_at and local_start")
	case (s.DurationMinutes == 0) == (s.EndsAt == ""):
		return booking.Intent{}, BadRequest(booking.CodeMissingField, "give exactly one of duration_minutes and ends_at")
	}
	loc, err := localtime.LoadZone(s.TimeZone)
	if err != nil {
		return booking.Intent{}, BadRequest(booking.CodeUnknownTimeZone, "time_zone %q is not an IANA zone", s.TimeZone)
	}
	start, e := s.start(loc)
	if e != nil {
		return booking.Intent{}, e
	}
	end := start.Add(time.Duration(s.DurationMinutes) * time.Minute)
	if s.EndsAt != "" {
		if end, err = time.Parse(time.RFC3339, s.EndsAt); err != nil {
			return booking.Intent{}, BadRequest(booking.CodeInvalidTime, "ends_at must be RFC 3339 with an offset, e.g. 2026-12-08T10:30:00+01:00")
		}
	}
	if !end.After(start) {
		return booking.Intent{}, BadRequest(booking.CodeInvalidTimeRange, "the end must be after the start")
	}
	if !start.After(now) {
		return booking.Intent{}, BadRequest(booking.CodeStartsInPast, "the start %s is in the past", start.Format(time.RFC3339))
	}
	in := booking.Intent{PropertyID: s.PropertyID, AgentID: s.AgentID, AgentPool: s.AgentPool, ExtraResources: s.ExtraResources,
		StartsAt: start, EndsAt: end, TimeZone: s.TimeZone}.Normalize()
	if err := in.Validate(); err != nil {
		return booking.Intent{}, FromRejection(err)
	}
	return in, nil
}

func (s Slot) start(loc *time.Location) (time.Time, *Error) {
	if s.StartsAt != "" {
		t, err := time.Parse(time.RFC3339, s.StartsAt)
		if err != nil {
			return time.Time{}, BadRequest(booking.CodeInvalidTime, "starts_at must be RFC 3339 with an offset, e.g. 2026-12-08T10:00:00+01:00")
		}
		return t, nil
	}
	t, err := localtime.Parse(s.LocalStart, loc.String())
	var gap *localtime.NonexistentError
	var twice *localtime.AmbiguousError
	switch {
	case errors.As(err, &gap):
		e := BadRequest(booking.CodeNonexistentTime, "%s does not exist in %s (clocks go forward); ask the caller which time they mean", s.LocalStart, s.TimeZone)
		e.Candidates = []time.Time{gap.Earlier, gap.Later}
		return time.Time{}, e
	case errors.As(err, &twice):
		e := BadRequest(booking.CodeAmbiguousTime, "%s happens twice in %s (clocks go back); ask the caller which one they mean", s.LocalStart, s.TimeZone)
		e.Candidates = []time.Time{twice.Earlier, twice.Later}
		return time.Time{}, e
	case err != nil:
		return time.Time{}, BadRequest(booking.CodeInvalidTime, "local_start must look like 2026-12-08T10:00: %v", err)
	}
	return t, nil
}

// Contact is the caller's contact; it goes to the store only, never into
// logs, calendars or receipts.
type Contact struct {
	Name  string `json:"name,omitempty"`
	Phone string `json:"phone,omitempty"`
	Email string `json:"email,omitempty"`
	// Notify is the channel the caller agreed to about this booking (sms,
	// email), or none: ask first. SMS needs the phone in E.164.
	Notify string `json:"notify,omitempty"`
	// Language is the messages' language (en, fr, zh); the default is
	// the call's.
	Language string `json:"language,omitempty"`
	// KeepOnFile: the caller agreed to be kept in the agency's CRM (it needs the phone or the email).
	KeepOnFile bool `json:"keep_on_file,omitempty"`
}

// NewCommit builds the commit a call asks for, checking what it names.
func NewCommit(s Slot, version string, c *Contact, now time.Time) (booking.CommitRequest, *Error) {
	if version == "" {
		return booking.CommitRequest{}, BadRequest(booking.CodeMissingField, "expected_policy_version is required (from the availability answer)")
	}
	in, e := s.Intent(now)
	if e != nil {
		return booking.CommitRequest{}, e
	}
	req := booking.CommitRequest{Intent: in, ExpectedPolicyVersion: version, ExpectedZoneRules: s.ExpectedZoneRules}
	if s.LocalStart != "" {
		req.ExpectedZoneRules, req.ExpectedLocalStart = localtime.Version(), s.LocalStart
	}
	if c != nil {
		contact, e := c.contact()
		if e != nil {
			return booking.CommitRequest{}, e
		}
		req.Contact = contact
	}
	return req, nil
}

// AskedBy stamps req's contact with its call's key, for the key's text cap.
func AskedBy(ctx context.Context, req *booking.CommitRequest) {
	if req.Contact != nil {
		req.Contact.By = Caller(ctx)
	}
}

// contact checks c and builds the store's: the channel consented to, and
// the language its messages are written in.
func (c Contact) contact() (*booking.Contact, *Error) {
	if len(c.Name) > 200 || len(c.Phone) > 40 || len(c.Email) > 254 {
		return nil, BadRequest(booking.CodeMissingField, "contact name, phone or email is too long")
	}
	ch, err := booking.ParseChannel(c.Notify)
	out := &booking.Contact{Name: strings.TrimSpace(c.Name), Phone: strings.TrimSpace(c.Phone), Email: strings.TrimSpace(c.Email), Notify: ch, KeepOnFile: c.KeepOnFile}
	if err := cmp.Or(err, out.ValidateChannel()); err != nil { // an unknown channel is said first
		return nil, FromRejection(err)
	}
	if ch != booking.ChannelNone {
		lang, err := speech.ParseLang(c.Language)
		if err != nil {
			return nil, BadRequest(booking.CodeInvalidContact, "%v", err)
		}
		out.Lang = string(lang)
	}
	return out, nil
}

// DefaultFrom fills what a reschedule leaves out from the booking it
// moves, as the store holds it: the property, the agent, the other
// resources (a key holder), the zone and the length. A move names only
// what changes, the new time at the least. A policy version left out is
// the one in force (current): the store decides the move under its rules
// either way, and the old booking's version may be gone.
func (b *RescheduleBody) DefaultFrom(old booking.Intent, current string) {
	s := &b.Slot
	if s.PropertyID == "" {
		s.PropertyID = old.PropertyID
	}
	if s.AgentID == "" && s.AgentPool == "" {
		s.AgentID = old.AgentID // the agent the booking has, chosen from a pool or not
	}
	if s.ExtraResources == nil {
		s.ExtraResources = old.ExtraResources
	}
	if s.TimeZone == "" {
		s.TimeZone = old.TimeZone
	}
	if s.DurationMinutes == 0 && s.EndsAt == "" {
		s.DurationMinutes = int(old.EndsAt.Sub(old.StartsAt) / time.Minute)
	}
	if b.ExpectedPolicyVersion == "" {
		b.ExpectedPolicyVersion = current
	}
}

// RescheduleBody is POST /v1/bookings/{request_key}/reschedule.
type RescheduleBody struct {
	NewRequestKey string `json:"new_request_key"`
	Slot
	ExpectedPolicyVersion string `json:"expected_policy_version"`
}
