package msgraph

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// Upsert makes the mailbox's calendar show b, and is safe to call any
// number of times. It looks for the booking's event by its marker; with
// none it creates one (with a transactionId, so its resent POST returns
// it), and otherwise refuses an event that is not ours or corrects ours
// with If-Match, re-reading after a 412.
func (m *Mirror) Upsert(ctx context.Context, b calendars.Booking) (calendars.Synced, error) {
	want, err := m.event(b)
	if err != nil {
		return calendars.Synced{}, err
	}
	mailbox := b.Calendar.ID
	for range calendars.MaxRaces {
		found, err := m.ours(ctx, mailbox, b.RequestKey, b.BookingID)
		if err != nil {
			return calendars.Synced{}, fmt.Errorf("graph upsert %s: %w", b.RequestKey, err)
		}
		if len(found) == 0 {
			return m.create(ctx, b, want)
		}
		cur := found[0]
		if sameShown(&cur, want) {
			return calendars.Synced{EventID: cur.ID, ETag: cur.ETag}, nil
		}
		var upd event
		err = m.do(ctx, request{method: http.MethodPatch, path: userPath(mailbox) + "/events/" + url.PathEscape(cur.ID),
			header: http.Header{"If-Match": {cur.ETag}}, body: correction(want)}, &upd)
		if changedMeanwhile(err) || isStatus(err, http.StatusNotFound) {
			continue // changed or deleted since it was read: read it again
		}
		if err != nil {
			return calendars.Synced{}, fmt.Errorf("graph upsert %s: update: %w", b.RequestKey, err)
		}
		return calendars.Synced{EventID: upd.ID, ETag: upd.ETag, Corrected: true}, nil
	}
	return calendars.Synced{}, fmt.Errorf("graph upsert %s: event kept changing (%d precondition failures)", b.RequestKey, calendars.MaxRaces)
}

// maxGenerations bounds the creates of one Upsert whose created event
// turns out not to be in the calendar: each hand deletion of a booking's
// event may cost one more.
const maxGenerations = 16

// create POSTs the booking's event, then reads the calendar: an event
// that answered for the transactionId but is not there (one deleted by
// hand) makes the next generation's create. Concurrent writers follow
// the same generations, and meet on the same events.
func (m *Mirror) create(ctx context.Context, b calendars.Booking, want event) (calendars.Synced, error) {
	mailbox := b.Calendar.ID
	for gen := range maxGenerations {
		want.TransactionID = transactionID(b.RequestKey, b.BookingID, gen)
		var made event
		if err := m.do(ctx, request{method: http.MethodPost, path: userPath(mailbox) + "/calendar/events", body: want}, &made); err != nil {
			return calendars.Synced{}, fmt.Errorf("graph upsert %s: create: %w", b.RequestKey, err)
		}
		found, err := m.ours(ctx, mailbox, b.RequestKey, b.BookingID)
		if err != nil {
			return calendars.Synced{}, fmt.Errorf("graph upsert %s: read after create: %w", b.RequestKey, err)
		}
		for _, ev := range found {
			if ev.ID == made.ID {
				return calendars.Synced{EventID: ev.ID, ETag: ev.ETag}, nil
			}
		}
		if len(found) > 0 { // another writer's generation got there
			return calendars.Synced{EventID: found[0].ID, ETag: found[0].ETag}, nil
		}
	}
	return calendars.Synced{}, &calendars.RefusedError{Err: fmt.Errorf("graph upsert %s: %d creates answered with events not in the calendar",
		b.RequestKey, maxGenerations)}
}

// changedMeanwhile is Graph saying the etag we sent is stale: 412, or 409
// ErrorIrresolvableConflict on some paths.
func changedMeanwhile(err error) bool {
	return isStatus(err, http.StatusPreconditionFailed, http.StatusConflict)
}

// Delete removes the booking's events (every copy of ours). None, or a
// 404 on the way, counts as done; an event with our marker that we did
// not write is refused.
func (m *Mirror) Delete(ctx context.Context, mailbox, requestKey, bookingID string) error {
	for range calendars.MaxRaces {
		found, err := m.ours(ctx, mailbox, requestKey, bookingID)
		if err != nil {
			return fmt.Errorf("graph delete %s: %w", requestKey, err)
		}
		stale := false
		for _, cur := range found {
			err = m.do(ctx, request{method: http.MethodDelete, path: userPath(mailbox) + "/events/" + url.PathEscape(cur.ID),
				header: http.Header{"If-Match": {cur.ETag}}}, nil)
			switch {
			case changedMeanwhile(err):
				stale = true
			case err != nil && !isStatus(err, http.StatusNotFound):
				return fmt.Errorf("graph delete %s: %w", requestKey, err)
			}
		}
		if !stale {
			return nil
		}
	}
	return fmt.Errorf("graph delete %s: event kept changing (%d precondition failures)", requestKey, calendars.MaxRaces)
}

// Lookup returns the booking's event, nil when the calendar has none. An
// event carrying the key that is not ours comes back with Ours unset.
func (m *Mirror) Lookup(ctx context.Context, mailbox, requestKey string) (*calendars.Event, error) {
	found, err := m.find(ctx, mailbox, requestKey)
	if err != nil {
		return nil, fmt.Errorf("graph lookup %s: %w", requestKey, err)
	}
	if len(found) == 0 {
		return nil, nil
	}
	pick := found[0]
	for _, ev := range found {
		if ev.ours(ev.property(propBookingID)) {
			pick = ev
			break
		}
	}
	out, err := pick.neutral()
	if err != nil {
		return nil, fmt.Errorf("graph lookup %s: %w", requestKey, err)
	}
	return &out, nil
}

// ours finds the booking's events: none when no event carries its key, a
// ForeignEventError when only events we did not write do.
func (m *Mirror) ours(ctx context.Context, mailbox, requestKey, bookingID string) ([]event, error) {
	found, err := m.find(ctx, mailbox, requestKey)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var out []event
	for _, ev := range found {
		if ev.ours(bookingID) {
			out = append(out, ev)
		}
	}
	if len(out) == 0 {
		return nil, &calendars.ForeignEventError{CalendarID: mailbox, EventID: found[0].ID,
			Why: "it carries our marker for this request key, but bookingsaga did not write it for this booking"}
	}
	return out, nil
}

// find lists the mailbox's events that carry key in our marker, through
// GET /users/{id}/events with the $filter Graph documents for
// single-value extended properties.
func (m *Mirror) find(ctx context.Context, mailbox, key string) ([]event, error) {
	q := url.Values{
		"$filter": {"singleValueExtendedProperties/Any(ep: ep/id eq " + odataString(RequestKeyProperty) + " and ep/value eq " + odataString(key) + ")"},
		"$expand": {expandMarker},
	}
	var page struct {
		Value []event `json:"value"`
	}
	if err := m.do(ctx, request{method: http.MethodGet, path: userPath(mailbox) + "/events", query: q}, &page); err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	// Graph's filter ignores case; request keys do not.
	return slices.DeleteFunc(page.Value, func(ev event) bool { return ev.property(RequestKeyProperty) != key }), nil
}

// event renders b as the calendar should show it: references only (the
// property, the booking reference and its zone), never the caller's
// phone number or email.
func (m *Mirror) event(b calendars.Booking) (event, error) {
	if b.Calendar.ID == "" || b.BookingID == "" || b.RequestKey == "" {
		return event{}, fmt.Errorf("graph: booking %q: mailbox, booking id and request key are required", b.BookingID)
	}
	loc, err := localtime.LoadZone(b.TimeZone)
	if err != nil {
		return event{}, fmt.Errorf("graph: booking %s: %w", b.BookingID, err)
	}
	if !b.StartsAt.Before(b.EndsAt) {
		return event{}, fmt.Errorf("graph: booking %s: end must be after start", b.BookingID)
	}
	ev := event{
		Subject: "Property viewing: " + b.PropertyRef,
		Body: &itemBody{ContentType: "text", Content: fmt.Sprintf("Booking reference %s, %s %s.\nManaged by bookingsaga: change the booking there; edits here are put back.",
			b.Reference, b.StartsAt.In(loc).Format("Mon 2 Jan 2006 15:04"), b.TimeZone)},
		Start: utc(b.StartsAt), End: utc(b.EndsAt),
		Location: &location{DisplayName: b.PropertyRef}, ShowAs: "busy",
		Properties: []extendedValue{{ID: RequestKeyProperty, Value: b.RequestKey}, {ID: propBookingID, Value: b.BookingID}},
	}
	if m.cfg.InviteAttendees {
		for _, a := range b.Attendees {
			var at attendee
			at.EmailAddress.Address, at.Type = a, "required"
			ev.Attendees = append(ev.Attendees, at)
		}
	}
	return ev, nil
}

// correction is what an update sends: what the calendar shows. The
// transactionId and the marker are set once, at creation.
func correction(want event) event {
	return event{Subject: want.Subject, Body: want.Body, Start: want.Start, End: want.End, Location: want.Location, ShowAs: want.ShowAs}
}

// sameShown reports whether cur already shows what want asks for: the
// instants and the title. Other drift (a body edit) is left alone.
func sameShown(cur *event, want event) bool {
	cs, err1 := cur.Start.instant()
	ce, err2 := cur.End.instant()
	ws, _ := want.Start.instant()
	we, _ := want.End.instant()
	return err1 == nil && err2 == nil && cs.Equal(ws) && ce.Equal(we) && cur.Subject == want.Subject
}
