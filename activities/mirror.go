package activities

import (
	"context"
	"errors"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// SyncCalendar makes every calendar of the booking's resources match the
// store: a confirmed booking has its event, anything else has none. It reads
// the store each time, so running it again, late or twice, converges.
func (a *Activities) SyncCalendar(ctx context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
	b, cals, err := a.bookingCalendars(ctx, in.RequestKey)
	if err != nil || a.Calendar == nil || len(cals) == 0 || b.Status == booking.StatusHeld {
		return booking.SyncOutput{Skipped: err == nil}, err
	}
	var errs []error
	permanent := true
	for _, cal := range cals {
		var err error
		if b.Status == booking.StatusConfirmed {
			_, err = a.Calendar.Upsert(ctx, calendarBooking(b, cal))
		} else {
			err = a.Calendar.Delete(ctx, cal, b.RequestKey, b.BookingID.String())
		}
		if err != nil {
			errs = append(errs, err)
			permanent = permanent && gcal.Permanent(err)
		}
	}
	if len(errs) > 0 {
		// One refused calendar must not stop the others being written, and
		// a transient failure anywhere keeps the whole step retrying.
		return booking.SyncOutput{}, mirrorError("sync calendar", in.RequestKey, errors.Join(errs...), permanent)
	}
	if b.Status != booking.StatusConfirmed {
		return booking.SyncOutput{}, nil // the events are gone; there is no event id to report
	}
	id := gcal.EventID(b.RequestKey)
	if _, err := a.Store.RecordMirror(ctx, booking.MirrorRecord{RequestKey: b.RequestKey, ProviderEventID: id}); err != nil {
		return booking.SyncOutput{}, storeError("sync calendar", in.RequestKey, err)
	}
	return booking.SyncOutput{EventID: id}, nil
}

func (a *Activities) bookingCalendars(ctx context.Context, key string) (booking.Booking, []string, error) {
	b, err := a.Store.Lookup(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return booking.Booking{}, nil, rejectedError(booking.Rejectf(booking.CodeNotBooked, "no booking under this key"))
	}
	if err != nil {
		return booking.Booking{}, nil, storeError("read booking", key, err)
	}
	var cals []string
	for _, id := range b.Intent.Resources() {
		r, err := a.Store.Resource(ctx, id)
		if err != nil {
			return booking.Booking{}, nil, storeError("read resource", id, err)
		}
		if r.CalendarID != "" {
			cals = append(cals, r.CalendarID)
		}
	}
	return b, cals, nil
}

func calendarBooking(b booking.Booking, calendarID string) gcal.Booking {
	return gcal.Booking{CalendarID: calendarID, BookingID: b.BookingID.String(), RequestKey: b.RequestKey,
		PropertyRef: b.Intent.PropertyID, Reference: receipt.Reference(b.RequestKey),
		StartsAt: b.Intent.StartsAt, EndsAt: b.Intent.EndsAt, TimeZone: b.Intent.TimeZone}
}

// SyncCRM makes the CRM's viewing record match the store.
func (a *Activities) SyncCRM(ctx context.Context, in booking.KeyInput) (booking.SyncOutput, error) {
	b, err := a.Store.Lookup(ctx, in.RequestKey)
	if err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	if a.CRM == nil || b.Status == booking.StatusHeld {
		return booking.SyncOutput{Skipped: true}, nil
	}
	rec, err := a.CRM.Upsert(ctx, Viewing(b))
	if err != nil {
		return booking.SyncOutput{}, mirrorError("sync crm", in.RequestKey, err, crm.Permanent(err))
	}
	if _, err := a.Store.RecordMirror(ctx, booking.MirrorRecord{RequestKey: b.RequestKey, CRMRef: rec.ID}); err != nil {
		return booking.SyncOutput{}, storeError("sync crm", in.RequestKey, err)
	}
	return booking.SyncOutput{CRMRef: rec.ID}, nil
}

// Viewing is the CRM record a booking should have.
func Viewing(b booking.Booking) crm.Viewing {
	v := crm.Viewing{BookingID: b.BookingID.String(), RequestKey: b.RequestKey, PropertyRef: b.Intent.PropertyID,
		AgentRef: b.Intent.AgentID, StartsAt: b.Intent.StartsAt, EndsAt: b.Intent.EndsAt,
		TimeZone: b.Intent.TimeZone, Status: crm.StatusScheduled}
	switch b.Status {
	case booking.StatusReleasedForReschedule:
		return v.RescheduledTo(b.ReplacedByRequestKey)
	case booking.StatusCancelled, booking.StatusExpired:
		return v.Cancelled()
	}
	return v
}
