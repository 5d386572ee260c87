package gcal

import (
	"fmt"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/calendars"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// event renders b as the calendar should show it. It carries references
// only: the property, the booking reference and the local zone. The
// caller's phone number and email never reach the calendar.
func (m *Mirror) event(b calendars.Booking) (*calendar.Event, error) {
	if b.Calendar.ID == "" || b.BookingID == "" || b.RequestKey == "" {
		return nil, fmt.Errorf("gcal: booking %q: calendar id, booking id and request key are required", b.BookingID)
	}
	loc, err := localtime.LoadZone(b.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("gcal: booking %s: %w", b.BookingID, err)
	}
	if !b.StartsAt.Before(b.EndsAt) {
		return nil, fmt.Errorf("gcal: booking %s: end must be after start", b.BookingID)
	}
	ev := &calendar.Event{
		Id:          EventID(b.RequestKey),
		Summary:     "Property viewing: " + b.PropertyRef,
		Description: fmt.Sprintf("Booking reference %s.\nManaged by bookingsaga: change the booking there; edits here are put back.", b.Reference),
		Location:    b.PropertyRef,
		Start:       &calendar.EventDateTime{DateTime: b.StartsAt.In(loc).Format(time.RFC3339), TimeZone: b.TimeZone},
		End:         &calendar.EventDateTime{DateTime: b.EndsAt.In(loc).Format(time.RFC3339), TimeZone: b.TimeZone},
		Status:      "confirmed",
		ExtendedProperties: &calendar.EventExtendedProperties{Private: map[string]string{
			propBookingID:  b.BookingID,
			propRequestKey: b.RequestKey,
			propManaged:    "1",
		}},
	}
	if m.cfg.InviteAttendees {
		for _, a := range b.Attendees {
			ev.Attendees = append(ev.Attendees, &calendar.EventAttendee{Email: a})
		}
	}
	return ev, nil
}

// ours reports whether ev carries our mark for this booking.
func ours(ev *calendar.Event, bookingID string) bool {
	return ev.ExtendedProperties != nil && ev.ExtendedProperties.Private[propBookingID] == bookingID
}

// sameShown reports whether cur already shows what want asks for: the
// instants, zone and title. Other drift (a description edit) is left alone.
func sameShown(cur, want *calendar.Event) bool {
	return sameInstant(cur.Start, want.Start) && sameInstant(cur.End, want.End) &&
		cur.Start.TimeZone == want.Start.TimeZone && cur.Summary == want.Summary
}

func sameInstant(a, b *calendar.EventDateTime) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, err1 := time.Parse(time.RFC3339, a.DateTime)
	tb, err2 := time.Parse(time.RFC3339, b.DateTime)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}
