package hubspot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/crm"
)

// The meeting's custom properties: the booking's references, so that the
// meeting can be read back as the viewing it mirrors. Staff see the
// meeting's own fields (its times, title and outcome).
const (
	propBookingID  = "bookingsaga_booking_id" // unique: the upsert's idProperty
	propRequestKey = "bookingsaga_request_key"
	propProperty   = "bookingsaga_property"
	propAgent      = "bookingsaga_agent"
	propTimeZone   = "bookingsaga_time_zone"
	propStatus     = "bookingsaga_status"
	propOutcome    = "bookingsaga_outcome"
	propReplacedBy = "bookingsaga_replaced_by"
)

var customProperties = []string{propBookingID, propRequestKey, propProperty, propAgent, propTimeZone, propStatus, propOutcome, propReplacedBy}

// readProperties are the properties Get asks for.
var readProperties = strings.Join(append([]string{"hs_meeting_start_time", "hs_meeting_end_time", "hs_meeting_outcome", "hs_meeting_title"}, customProperties...), ",")

// HubSpot's meeting outcomes (hs_meeting_outcome).
const (
	outcomeScheduled   = "SCHEDULED"
	outcomeCompleted   = "COMPLETED"
	outcomeRescheduled = "RESCHEDULED"
	outcomeNoShow      = "NO_SHOW"
	outcomeCanceled    = "CANCELED"
)

// meetingOutcome is how HubSpot shows v: its status, or, on a viewing
// that took place, how it went.
func meetingOutcome(v crm.Viewing) string {
	switch {
	case v.Status == crm.StatusRescheduled:
		return outcomeRescheduled
	case v.Status == crm.StatusCancelled || v.Outcome == "cancelled_by_agency":
		return outcomeCanceled
	case v.Outcome == "attended":
		return outcomeCompleted
	case v.Outcome == "no_show":
		return outcomeNoShow
	}
	return outcomeScheduled
}

// statusOf reads the status and outcome back from what HubSpot shows, so
// that a meeting changed by hand reads as changed: CANCELED is a
// cancellation unless the viewing was the agency's cancelled_by_agency.
func statusOf(p map[string]string) (crm.Status, string) {
	switch p["hs_meeting_outcome"] {
	case outcomeRescheduled:
		return crm.StatusRescheduled, ""
	case outcomeCompleted:
		return crm.StatusScheduled, "attended"
	case outcomeNoShow:
		return crm.StatusScheduled, "no_show"
	case outcomeCanceled:
		if p[propOutcome] == "cancelled_by_agency" && p[propStatus] == string(crm.StatusScheduled) {
			return crm.StatusScheduled, "cancelled_by_agency"
		}
		if p[propOutcome] == "cancelled_by_agency" {
			return crm.StatusCancelled, "cancelled_by_agency"
		}
		return crm.StatusCancelled, ""
	case outcomeScheduled:
		return crm.StatusScheduled, ""
	}
	return crm.Status(strings.ToLower(p["hs_meeting_outcome"])), ""
}

// properties are v as a meeting. An empty value clears the property, as
// HubSpot reads it.
func properties(v crm.Viewing) map[string]string {
	return map[string]string{
		"hs_timestamp":          hubspotTime(v.StartsAt),
		"hs_meeting_start_time": hubspotTime(v.StartsAt),
		"hs_meeting_end_time":   hubspotTime(v.EndsAt),
		"hs_meeting_title":      title(v),
		"hs_meeting_outcome":    meetingOutcome(v),
		propBookingID:           v.BookingID,
		propRequestKey:          v.RequestKey,
		propProperty:            v.PropertyRef,
		propAgent:               v.AgentRef,
		propTimeZone:            v.TimeZone,
		propStatus:              string(v.Status),
		propOutcome:             v.Outcome,
		propReplacedBy:          v.ReplacedBy,
	}
}

// title is the viewing's title as the mirror names it, or its references.
func title(v crm.Viewing) string {
	if v.Title != "" {
		return v.Title
	}
	return "Viewing · " + v.PropertyRef + " · " + v.AgentRef
}

func hubspotTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// record reads a meeting back as the viewing it shows.
func record(o object) (crm.Record, error) {
	p := o.Properties
	start, err1 := time.Parse(time.RFC3339, p["hs_meeting_start_time"])
	end, err2 := time.Parse(time.RFC3339, p["hs_meeting_end_time"])
	if err := errors.Join(err1, err2); err != nil {
		return crm.Record{}, fmt.Errorf("hubspot meeting %s: %w", o.ID, err)
	}
	status, outcome := statusOf(p)
	var contacts []string
	for _, a := range o.Associations["contacts"].Results {
		contacts = append(contacts, a.ID)
	}
	return crm.Record{ID: o.ID, Contacts: contacts, Viewing: crm.Viewing{BookingID: p[propBookingID], RequestKey: p[propRequestKey],
		PropertyRef: p[propProperty], AgentRef: p[propAgent], StartsAt: start.UTC(), EndsAt: end.UTC(), TimeZone: p[propTimeZone],
		Status: status, ReplacedBy: p[propReplacedBy], Outcome: outcome, Title: p["hs_meeting_title"]}}, nil
}

// propertyCreate is a PropertyCreate.
type propertyCreate struct {
	Name           string `json:"name"`
	Label          string `json:"label"`
	Type           string `json:"type"`
	FieldType      string `json:"fieldType"`
	GroupName      string `json:"groupName"`
	HasUniqueValue bool   `json:"hasUniqueValue,omitempty"`
}

type groupCreate struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

const group = "bookingsaga"

// ensureSchema creates the meeting's custom properties. Until every one
// exists no meeting is written, since an upsert by a property HubSpot
// doesn't know is refused.
func (c *Client) ensureSchema(ctx context.Context) error {
	return c.ensure(ctx, "meetings", &c.schema, customProperties, propBookingID)
}

// ensure creates the custom properties names on the object type kind, in
// a group of their own, once per process (done): one that exists already
// answers 409, which is as good. The property unique is created with
// unique values, for upserts by it.
func (c *Client) ensure(ctx context.Context, kind string, done *bool, names []string, unique string) error {
	c.mu.Lock()
	ok := *done
	c.mu.Unlock()
	if ok {
		return nil
	}
	if err := c.create(ctx, "/crm/v3/properties/"+kind+"/groups", groupCreate{Name: group, Label: "bookingsaga"}); err != nil {
		return fmt.Errorf("%s property group: %w", kind, err)
	}
	for _, name := range names {
		p := propertyCreate{Name: name, Label: strings.ReplaceAll(name, "_", " "), Type: "string", FieldType: "text",
			GroupName: group, HasUniqueValue: name == unique}
		if err := c.create(ctx, "/crm/v3/properties/"+kind, p); err != nil {
			return fmt.Errorf("%s property %s: %w", kind, name, err)
		}
	}
	c.mu.Lock()
	*done = true
	c.mu.Unlock()
	return nil
}

func (c *Client) create(ctx context.Context, path string, body any) error {
	err := c.cfg.Retry.Do(ctx, crm.Classify, func(ctx context.Context) error {
		return c.call(ctx, http.MethodPost, path, body, nil)
	})
	var se *crm.StatusError
	if errors.As(err, &se) && se.Code == http.StatusConflict {
		return nil
	}
	return err
}
