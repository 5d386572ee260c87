package api

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The catalogue: resources with their hours and limits, the policy, and
// the listing of bookings staff read. Reads come from the store in this
// process, through the client's catalogue; none starts a workflow.

// ResourceBody is PUT /v1/resources/{id}.
type ResourceBody struct {
	Kind                string `json:"kind"`
	Capacity            int    `json:"capacity"`
	TimeZone            string `json:"time_zone"`
	BufferBeforeMinutes int    `json:"buffer_before_minutes"`
	BufferAfterMinutes  int    `json:"buffer_after_minutes"`
	CalendarID          string `json:"calendar_id,omitempty"`
	// CalendarProvider is "google" (the default) or "microsoft", whose
	// calendar_id is a Microsoft 365 user's or room's mailbox.
	CalendarProvider string `json:"calendar_provider,omitempty"`
	DisplayName      string `json:"display_name,omitempty"`
	// DisplayNames are the name in other languages, by tag (fr, zh).
	DisplayNames map[string]string `json:"display_names,omitempty"`
	// Rules are its own hours, dates with other hours, time off, notice,
	// horizon and limits; none is the policy's alone.
	Rules *booking.Rules `json:"rules,omitempty"`
	// Facts are what property_info may say, each with its source, approved
	// by the key that PUTs them (approved_by), at approved_at or now.
	Facts []booking.Fact `json:"facts,omitempty"`
	// CRM is a property's agency CRM (http, hubspot); empty is the default.
	CRM string `json:"crm,omitempty"`
	// Address is where a property's viewings are (its address or meeting
	// point), in the caller's messages and invitation; Addresses are it in
	// other languages, by tag (fr, zh).
	Address   string            `json:"address,omitempty"`
	Addresses map[string]string `json:"addresses,omitempty"`
}

func (s *Server) putResource(w http.ResponseWriter, r *http.Request) error {
	var body ResourceBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	res := booking.Resource{ID: r.PathValue("id"), Kind: body.Kind, Capacity: body.Capacity, TimeZone: body.TimeZone,
		BufferBeforeMinutes: body.BufferBeforeMinutes, BufferAfterMinutes: body.BufferAfterMinutes, CalendarID: body.CalendarID,
		CalendarProvider: body.CalendarProvider, DisplayName: body.DisplayName, Rules: body.Rules, Facts: body.Facts, CRM: body.CRM,
		Address: body.Address}
	names, e := spokenTags("display_names", body.DisplayNames)
	if e != nil {
		return e
	}
	addresses, e := spokenTags("addresses", body.Addresses)
	if e != nil {
		return e
	}
	res.DisplayNames, res.Addresses = names, addresses
	for i := range res.Facts {
		if res.Facts[i].ApprovedAt.IsZero() {
			res.Facts[i].ApprovedAt = s.set.Now().UTC().Truncate(time.Second)
		}
		// The key that writes a fact approves it: no body names another.
		res.Facts[i].ApprovedBy = edge.Caller(r.Context())
	}
	if err := s.set.Catalogue.PutResource(r.Context(), res); err != nil {
		return err
	}
	// This process's lines say the new name at once; the others' at their
	// next refresh.
	s.set.Names.Set(r.Context(), res.ID, res.SpokenNames())
	return s.getResource(w, r) // as stored: a provider left out may have been kept

}

// PolicyBody is PUT /v1/policy. Times of day are "HH:MM" in each
// property's own zone.
type PolicyBody struct {
	Version             string `json:"version"`
	SlotMinutes         int    `json:"slot_minutes"`
	BufferBeforeMinutes int    `json:"buffer_before_minutes"`
	BufferAfterMinutes  int    `json:"buffer_after_minutes"`
	OpensAt             string `json:"opens_at"`
	ClosesAt            string `json:"closes_at"`
	HoldTTLMinutes      int    `json:"hold_ttl_minutes"`
	MinNoticeMinutes    int    `json:"min_notice_minutes"`
	// HorizonDays is how far ahead a booking may start; 0 is no limit.
	HorizonDays int `json:"horizon_days,omitempty"`
	// ReminderMinutes is how long before the viewing a caller who agreed
	// to messages is reminded; absent is 1440 (a day), 0 is none.
	ReminderMinutes *int `json:"reminder_minutes,omitempty"`
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request) error {
	var body PolicyBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	opens, err1 := booking.ParseClock(body.OpensAt)
	closes, err2 := booking.ParseClock(body.ClosesAt)
	if err1 != nil || err2 != nil {
		return edge.BadRequest(booking.CodeInvalidPolicy, "opens_at and closes_at must look like 08:00")
	}
	p := booking.Policy{Version: body.Version, SlotMinutes: body.SlotMinutes, DefaultBufferBeforeMinutes: body.BufferBeforeMinutes,
		DefaultBufferAfterMinutes: body.BufferAfterMinutes, OpensAt: opens, ClosesAt: closes,
		HoldTTL: time.Duration(body.HoldTTLMinutes) * time.Minute, MinNotice: time.Duration(body.MinNoticeMinutes) * time.Minute,
		HorizonDays: body.HorizonDays, Reminder: 24 * time.Hour}
	if m := body.ReminderMinutes; m != nil { // out of range stays out of range, for Validate to say so
		p.Reminder = time.Duration(min(max(*m, -1), 7*24*60+1)) * time.Minute
	}
	if err := s.set.Catalogue.PutPolicy(r.Context(), p); err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, policyBody(p))
}

// PoolBody is PUT /v1/pools/{id}: a team of agents a booking may ask for
// instead of one (agent_pool).
type PoolBody struct {
	Members []string `json:"members"`
}

func (s *Server) putPool(w http.ResponseWriter, r *http.Request) error {
	var body PoolBody
	if e := edge.Decode(r.Body, s.set.MaxBody, &body); e != nil {
		return e
	}
	p := booking.Pool{ID: r.PathValue("id"), Members: body.Members}
	if err := s.set.Catalogue.PutPool(r.Context(), p); err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, p)
}

func (s *Server) getPool(w http.ResponseWriter, r *http.Request) error {
	p, err := s.set.Catalogue.Pool(r.Context(), r.PathValue("id"))
	if err != nil {
		return notFound(err, booking.CodeUnknownPool)
	}
	return edge.WriteJSON(w, http.StatusOK, p)
}

func (s *Server) getResource(w http.ResponseWriter, r *http.Request) error {
	res, err := s.set.Catalogue.Resource(r.Context(), r.PathValue("id"))
	if err != nil {
		return notFound(err, booking.CodeUnknownResource)
	}
	return edge.WriteJSON(w, http.StatusOK, ResourceAnswer{ID: res.ID, ResourceBody: ResourceBody{Kind: res.Kind, Capacity: res.Capacity,
		TimeZone: res.TimeZone, BufferBeforeMinutes: res.BufferBeforeMinutes, BufferAfterMinutes: res.BufferAfterMinutes,
		CalendarID: res.CalendarID, CalendarProvider: res.Provider(), DisplayName: res.DisplayName, DisplayNames: res.DisplayNames,
		Rules: res.Rules, Facts: res.Facts, CRM: res.CRM, Address: res.Address, Addresses: res.Addresses}})
}

// spokenTags keys names by the language whose lines say them ("fr-FR"
// is fr); a tag without lines is refused.
func spokenTags(field string, names map[string]string) (map[string]string, *edge.Error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(names))
	for tag, name := range names {
		lang, err := speech.ParseLang(tag)
		if err != nil || tag == "" {
			return nil, edge.BadRequest(booking.CodeInvalidResource, "%s: language %q has no lines; use en, fr or zh", field, tag)
		}
		out[string(lang)] = name
	}
	return out, nil
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.set.Catalogue.Policy(r.Context())
	if err != nil {
		return err
	}
	return edge.WriteJSON(w, http.StatusOK, policyBody(p))
}

func policyBody(p booking.Policy) PolicyBody {
	reminder := int(p.Reminder.Minutes())
	return PolicyBody{Version: p.Version, SlotMinutes: p.SlotMinutes, BufferBeforeMinutes: p.DefaultBufferBeforeMinutes,
		BufferAfterMinutes: p.DefaultBufferAfterMinutes, OpensAt: booking.Clock(p.OpensAt), ClosesAt: booking.Clock(p.ClosesAt),
		HoldTTLMinutes: int(p.HoldTTL.Minutes()), MinNoticeMinutes: int(p.MinNotice.Minutes()), HorizonDays: p.HorizonDays,
		ReminderMinutes: &reminder}
}

// notFound answers a read of something that does not exist with 404 and
// its code: a GET names it in its path, so it is not malformed input.
func notFound(err error, code booking.Code) error {
	var rej *booking.Rejection
	if errors.As(err, &rej) && rej.Code == code {
		return &edge.Error{Status: http.StatusNotFound, Code: string(code), Message: rej.Message}
	}
	return err
}

// bookings is GET /v1/bookings: with ?reference=, the receipt of the
// booking a caller quotes (agent scope); without, the listing staff read
// (ops scope, see route.scopeFor).
func (s *Server) bookings(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Has("reference") {
		return s.byReference(w, r)
	}
	q, e := listQuery(r)
	if e != nil {
		return e
	}
	page, err := s.set.Catalogue.Bookings(r.Context(), q)
	if err != nil {
		return err
	}
	out := BookingList{Bookings: make([]ListedBooking, 0, len(page))}
	for _, b := range page {
		out.Bookings = append(out.Bookings, listed(b))
	}
	if next := booking.NextPage(page, q.Limit); next != nil {
		out.NextCursor = encodeCursor(*next)
	}
	return edge.WriteJSON(w, http.StatusOK, out)
}

// BookingList is one page of a listing; NextCursor, when set, asks for the
// next (?cursor=), and its absence means this page was the last.
type BookingList struct {
	Bookings   []ListedBooking `json:"bookings"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// ListedBooking is a booking as staff see it in a listing: no contact.
type ListedBooking struct {
	RequestKey     string         `json:"request_key"`
	Reference      string         `json:"reference"`
	BookingID      string         `json:"booking_id"`
	Status         booking.Status `json:"status"`
	PropertyID     string         `json:"property_id"`
	AgentID        string         `json:"agent_id"`
	ExtraResources []string       `json:"extra_resources,omitempty"`
	StartsAt       time.Time      `json:"starts_at"`
	EndsAt         time.Time      `json:"ends_at"`
	TimeZone       string         `json:"time_zone"`
	LocalStart     string         `json:"local_start"`
	PolicyVersion  string         `json:"policy_version"`
	HoldExpiresAt  *time.Time     `json:"hold_expires_at,omitempty"`
}

func listed(b booking.Booking) ListedBooking {
	l := ListedBooking{RequestKey: b.RequestKey, Reference: receipt.Reference(b.RequestKey), BookingID: b.BookingID.String(),
		Status: b.Status, PropertyID: b.Intent.PropertyID, AgentID: b.Intent.AgentID, ExtraResources: b.Intent.ExtraResources,
		StartsAt: b.Intent.StartsAt, EndsAt: b.Intent.EndsAt, TimeZone: b.Intent.TimeZone, PolicyVersion: b.PolicyVersion,
		HoldExpiresAt: b.HoldExpiresAt}
	if loc, err := localtime.LoadZone(b.Intent.TimeZone); err == nil {
		l.LocalStart = b.Intent.StartsAt.In(loc).Format(localtime.Layout)
	}
	return l
}

func listQuery(r *http.Request) (booking.ListQuery, *edge.Error) {
	v := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, v.Get("from"))
	to, err2 := time.Parse(time.RFC3339, v.Get("to"))
	if err1 != nil || err2 != nil {
		return booking.ListQuery{}, edge.BadRequest(booking.CodeInvalidTime, "from and to must be RFC 3339 with an offset")
	}
	q := booking.ListQuery{PropertyID: v.Get("property_id"), AgentID: v.Get("agent_id"), From: from, To: to,
		Status: booking.Status(v.Get("status"))}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 {
			return booking.ListQuery{}, edge.BadRequest(booking.CodeInvalidWindow, "limit must be a positive number")
		}
		q.Limit = n
	}
	if c := v.Get("cursor"); c != "" {
		cur, ok := decodeCursor(c)
		if !ok {
			return booking.ListQuery{}, edge.BadRequest(booking.CodeInvalidWindow, "cursor is not one this API gave")
		}
		q.After = cur
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	return q, nil
}

// A cursor is the last listed booking's start and key, opaque to callers.
func encodeCursor(c booking.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.StartsAt.UTC().Format(time.RFC3339Nano) + " " + c.RequestKey))
}

func decodeCursor(s string) (booking.Cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return booking.Cursor{}, false
	}
	at, key, ok := strings.Cut(string(raw), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || key == "" {
		return booking.Cursor{}, false
	}
	return booking.Cursor{StartsAt: t, RequestKey: key}, true
}
