package msgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Our marker: two single-value extended properties in bookingsaga's own
// property set (a GUID of ours), holding the request key, which events are
// found by, and the booking id. RequestKeyProperty is exported for tools
// that read a mailbox (the fault suite's checker).
const (
	propertySet        = "{09b78a2a-2a16-4a37-adb6-1a96db6e4277}"
	RequestKeyProperty = "String " + propertySet + " Name bookingsaga_request_key"
	propBookingID      = "String " + propertySet + " Name bookingsaga_booking_id"
)

// expandMarker asks Graph to return our two properties with each event.
const expandMarker = "singleValueExtendedProperties($filter=id eq '" + RequestKeyProperty + "' or id eq '" + propBookingID + "')"

// event is the part of Graph's event resource the adapter reads and writes.
type event struct {
	ID            string          `json:"id,omitempty"`
	ETag          string          `json:"@odata.etag,omitempty"`
	Subject       string          `json:"subject,omitempty"`
	Body          *itemBody       `json:"body,omitempty"`
	Start         *dateTimeZone   `json:"start,omitempty"`
	End           *dateTimeZone   `json:"end,omitempty"`
	Location      *location       `json:"location,omitempty"`
	ShowAs        string          `json:"showAs,omitempty"`
	IsCancelled   bool            `json:"isCancelled,omitempty"`
	TransactionID string          `json:"transactionId,omitempty"`
	Attendees     []attendee      `json:"attendees,omitempty"`
	Properties    []extendedValue `json:"singleValueExtendedProperties,omitempty"`
}

type itemBody struct {
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}

// dateTimeZone is Graph's dateTimeTimeZone: a wall time and its zone.
type dateTimeZone struct {
	DateTime string `json:"dateTime"`
	TimeZone string `json:"timeZone"`
}

type location struct {
	DisplayName string `json:"displayName"`
}

type attendee struct {
	EmailAddress struct {
		Address string `json:"address"`
	} `json:"emailAddress"`
	Type string `json:"type"`
}

type extendedValue struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// wallLayout is how Graph writes dateTime: no offset, seven fractional
// digits.
const wallLayout = "2006-01-02T15:04:05.0000000"

// utc writes an instant as Graph takes it. Events are written in UTC:
// every create and update method accepts it, where not all of them take
// every IANA zone; the booking's zone is named in the body for people.
func utc(t time.Time) *dateTimeZone {
	return &dateTimeZone{DateTime: t.UTC().Format(wallLayout), TimeZone: "UTC"}
}

// instant reads a dateTimeTimeZone. Replies are asked for in UTC (the
// Prefer header); an IANA zone is read too, anything else is an error
// rather than a guess.
func (d *dateTimeZone) instant() (time.Time, error) {
	if d == nil {
		return time.Time{}, fmt.Errorf("no date")
	}
	loc := time.UTC
	if d.TimeZone != "UTC" && d.TimeZone != "" {
		var err error
		if loc, err = localtime.LoadZone(d.TimeZone); err != nil {
			return time.Time{}, fmt.Errorf("time zone %q not understood", d.TimeZone)
		}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.9999999", d.DateTime, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: %w", d.DateTime, err)
	}
	return t, nil
}

// transactionID is the transactionId of a booking's event: derived from
// its key and booking id, so that every create of it, retried or
// concurrent (the saga's mirror step and reconciliation at once), names
// the same event, and Graph returns the first. The generation moves on
// only when the event that answered is not in the calendar: Graph does
// not say whether an event deleted by hand (moved to Deleted Items)
// still answers for its transactionId, and re-creating it must not get
// the deleted one back.
func transactionID(requestKey, bookingID string, generation int) string {
	return transactionPrefix(requestKey, bookingID) + strconv.Itoa(generation)
}

func transactionPrefix(requestKey, bookingID string) string {
	sum := sha256.Sum256([]byte("bookingsaga/graph/" + requestKey + "/" + bookingID))
	return "bs-" + hex.EncodeToString(sum[:12]) + "-"
}

func (e *event) property(id string) string {
	for _, p := range e.Properties {
		if strings.EqualFold(p.ID, id) {
			return p.Value
		}
	}
	return ""
}

// ours reports whether e is an event we wrote for the booking: our marker
// for it, and a transactionId we created it with.
func (e *event) ours(bookingID string) bool {
	key := e.property(RequestKeyProperty)
	return key != "" && e.property(propBookingID) == bookingID && strings.HasPrefix(e.TransactionID, transactionPrefix(key, bookingID))
}

// neutral is a Graph event in bookingsaga's terms.
func (e *event) neutral() (calendars.Event, error) {
	start, err := e.Start.instant()
	if err != nil {
		return calendars.Event{}, fmt.Errorf("event %s start: %w", e.ID, err)
	}
	end, err := e.End.instant()
	if err != nil {
		return calendars.Event{}, fmt.Errorf("event %s end: %w", e.ID, err)
	}
	out := calendars.Event{ID: e.ID, Summary: e.Subject, Status: "confirmed", Start: start, End: end}
	if e.IsCancelled {
		out.Status = "cancelled"
	}
	if bid := e.property(propBookingID); e.ours(bid) {
		out.Ours, out.RequestKey, out.BookingID = true, e.property(RequestKeyProperty), bid
	}
	return out, nil
}

// odataString quotes s as an OData string literal.
func odataString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
