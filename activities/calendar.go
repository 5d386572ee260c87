package activities

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The calendar mirror: writing a booking's events, and the re-check of
// free/busy before a commit.

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

// calendarBlock is what one resource's calendar says is busy.
type calendarBlock struct {
	res  booking.Resource
	busy []gcal.Interval
}

// calendarBlocks reads the calendars of the capacity-1 resources among ids
// over [from, to) widened by their buffers, less the times of our own
// bookings (read only when something is busy). A capacity-2 room's calendar shows our own bookings as busy
// too, so only capacity 1 can be read this way. The calendar is advisory:
// when it cannot be read the store still decides, so an error is logged,
// nothing is blocked, and checked is false.
func (a *Activities) calendarBlocks(ctx context.Context, ids []string, from, to time.Time) (blocks []calendarBlock, checked bool) {
	if a.Calendar == nil {
		return nil, true
	}
	watched, err := a.watchedAmong(ctx, ids)
	if err != nil {
		activity.GetLogger(ctx).Warn("calendar re-check skipped; the store decides alone", "error", err)
		return nil, false
	}
	if len(watched) == 0 {
		return nil, true
	}
	var cals []string
	before, after := 0, 0 // buffers are never negative
	for _, w := range watched {
		cals = append(cals, w.CalendarID)
		before, after = max(before, w.BufferBeforeMinutes), max(after, w.BufferAfterMinutes)
	}
	qFrom, qTo := from.Add(-minutes(before)), to.Add(minutes(after))
	periods, err := a.Calendar.FreeBusy(ctx, cals, qFrom, qTo)
	if err != nil {
		activity.GetLogger(ctx).Warn("calendar free/busy unavailable; the store decides alone", "error", err)
		return nil, false
	}
	blocks = make([]calendarBlock, 0, len(watched))
	busy := false
	for _, w := range watched {
		blocks = append(blocks, calendarBlock{res: w, busy: periods[w.CalendarID]})
		busy = busy || len(periods[w.CalendarID]) > 0
	}
	if !busy {
		return nil, true // the usual case on the commit path: nothing to tell apart
	}
	// Something is busy: take out the times of our own bookings, which
	// free/busy cannot tell from anyone else's.
	ours, err := a.Store.CalendarWatch(ctx, ids, qFrom, qTo)
	if err != nil {
		activity.GetLogger(ctx).Warn("calendar re-check skipped; the store decides alone", "error", err)
		return nil, false
	}
	for i := range blocks {
		for _, w := range ours {
			if w.ID == blocks[i].res.ID {
				blocks[i].busy = foreign(blocks[i].busy, w.Ours)
			}
		}
	}
	return blocks, true
}

// watchCache keeps the resources whose calendars are re-checked for a
// little while: they change rarely, and reading them on every commit would
// cost the voice caller a round trip. A change is seen within watchTTL; the
// check is advisory, and the store decides regardless.
type watchCache struct {
	mu   sync.Mutex
	at   time.Time
	list []booking.Resource
}

const watchTTL = 30 * time.Second

func (a *Activities) watchedAmong(ctx context.Context, ids []string) ([]booking.Resource, error) {
	a.watch.mu.Lock()
	defer a.watch.mu.Unlock()
	if a.watch.at.IsZero() || time.Since(a.watch.at) > watchTTL {
		list, err := a.Store.WatchedResources(ctx)
		if err != nil {
			return nil, err
		}
		a.watch.list, a.watch.at = list, time.Now()
	}
	var out []booking.Resource
	for _, r := range a.watch.list {
		if slices.Contains(ids, r.ID) {
			out = append(out, r)
		}
	}
	return out, nil
}

// blocked lists the calendar periods that a booking of [start, end) would
// touch, buffers included.
func blocked(blocks []calendarBlock, start, end time.Time) []booking.Busy {
	var out []booking.Busy
	for _, b := range blocks {
		from := start.Add(-minutes(b.res.BufferBeforeMinutes))
		to := end.Add(minutes(b.res.BufferAfterMinutes))
		for _, p := range b.busy {
			if p.Start.Before(to) && p.End.After(from) {
				out = append(out, booking.Busy{ResourceID: b.res.ID, Capacity: 1, From: p.Start, To: p.End})
			}
		}
	}
	return out
}

// foreign is what remains of busy periods once the times of our own
// bookings are taken out: free/busy cannot tell our mirrored events from
// anyone else's, and the store already decides about ours (including one
// just cancelled whose event is not deleted yet, or the booking a
// reschedule replaces).
func foreign(busy []gcal.Interval, ours []booking.Span) []gcal.Interval {
	var out []gcal.Interval
	for _, p := range busy {
		rest := []gcal.Interval{p}
		for _, o := range ours {
			var next []gcal.Interval
			for _, r := range rest {
				if !o.Start.Before(r.End) || !o.End.After(r.Start) {
					next = append(next, r)
					continue
				}
				if r.Start.Before(o.Start) {
					next = append(next, gcal.Interval{Start: r.Start, End: o.Start})
				}
				if o.End.Before(r.End) {
					next = append(next, gcal.Interval{Start: o.End, End: r.End})
				}
			}
			rest = next
		}
		out = append(out, rest...)
	}
	return out
}
