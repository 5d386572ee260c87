package activities

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
)

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

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

// Availability lists free slots: the store's, less those that the
// resources' calendars show busy (events written past the service). It is
// an offer, not a promise: only the commit decides.
func (a *Activities) Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	av, err := a.Store.Availability(ctx, q)
	if err != nil {
		return booking.Availability{}, storeError("availability", q.PropertyID, err)
	}
	ids := append([]string{q.PropertyID, q.AgentID}, q.ExtraResources...)
	blocks, _ := a.calendarBlocks(ctx, ids, q.From, q.To)
	free := av.Slots[:0]
	for _, s := range av.Slots {
		if len(blocked(blocks, s.StartsAt, s.EndsAt)) == 0 {
			free = append(free, s)
		}
	}
	av.Slots = free
	return av, nil
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
