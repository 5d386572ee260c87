package catalog

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
)

// The calendar re-check: what the resources' calendars show busy that the
// store does not explain. Availability leaves those slots out, and the
// commit hands them to the store, which refuses a slot they touch.

// Block is what one resource's calendar says is busy.
type Block struct {
	res  booking.Resource
	busy []calendars.Interval
}

// Blocks reads the calendars of the capacity-1 resources among ids over
// [from, to) widened by their buffers, less the times of our own bookings
// (read only when something is busy). A capacity-2 room's calendar shows
// our own bookings as busy too, so only capacity 1 can be read this way.
// The calendar is advisory: when one cannot be read the store still
// decides, so the error says the check was not whole, and only what the
// calendars that answered show busy blocks.
func (c *Catalog) Blocks(ctx context.Context, ids []string, from, to time.Time) ([]Block, error) {
	set, err := c.mirrors(ctx)
	if err != nil || set.Calendar == nil {
		return nil, err
	}
	watched, err := c.Watched(ctx, ids)
	if err != nil || len(watched) == 0 {
		return nil, err
	}
	var cals []calendars.Ref
	before, after := 0, 0 // buffers are never negative
	for _, w := range watched {
		cals = append(cals, Ref(w))
		before, after = max(before, w.BufferBeforeMinutes), max(after, w.BufferAfterMinutes)
	}
	qFrom, qTo := from.Add(-minutes(before)), to.Add(minutes(after))
	// What one calendar could not tell, the others still do: the error
	// says the check was partial, and what was read still blocks.
	periods, readErr := set.Calendar.FreeBusy(ctx, cals, qFrom, qTo)
	if readErr != nil {
		readErr = fmt.Errorf("calendar free/busy: %w", readErr)
	}
	blocks := make([]Block, 0, len(watched))
	busy := false
	for _, w := range watched {
		blocks = append(blocks, Block{res: w, busy: periods[Ref(w)]})
		busy = busy || len(periods[Ref(w)]) > 0
	}
	if !busy {
		return nil, readErr // the usual case on the commit path: nothing to tell apart
	}
	// Something is busy: take out the times of our own bookings, which
	// free/busy cannot tell from anyone else's.
	ours, err := c.Store.CalendarWatch(ctx, ids, qFrom, qTo)
	if err != nil {
		return nil, fmt.Errorf("our bookings' times: %w", err)
	}
	for i := range blocks {
		for _, w := range ours {
			if w.ID == blocks[i].res.ID {
				blocks[i].busy = foreign(blocks[i].busy, w.Ours)
			}
		}
	}
	return blocks, readErr
}

// Blocked lists the calendar periods that a booking of [start, end) would
// touch, buffers included.
func Blocked(blocks []Block, start, end time.Time) []booking.Busy {
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

// Only is blocks of the resources among ids.
func Only(blocks []Block, ids []string) []Block {
	var out []Block
	for _, b := range blocks {
		if slices.Contains(ids, b.res.ID) {
			out = append(out, b)
		}
	}
	return out
}

// watchCache keeps each agency's resources with calendars for a little
// while: they change rarely, and reading them on every commit would cost
// the voice caller a round trip. A change is seen within watchTTL; the
// check is advisory, and the store decides regardless.
type watchCache struct {
	mu sync.Mutex
	by map[string]watched // by agency id: two agencies may use one resource id
}

// watched is one agency's resources with calendars, as read at.
type watched struct {
	at   time.Time
	list []booking.Resource
}

const watchTTL = 30 * time.Second

// Watched lists the resources among ids whose calendars are re-checked:
// those of capacity 1. A capacity-2 room's calendar shows our own
// bookings as busy too, which free/busy cannot tell apart.
func (c *Catalog) Watched(ctx context.Context, ids []string) ([]booking.Resource, error) {
	all, err := c.calendared(ctx, ids)
	return slices.DeleteFunc(all, func(r booking.Resource) bool { return r.Capacity != 1 }), err
}

// calendared lists the resources among ids that have a calendar, in the
// order of ids.
func (c *Catalog) calendared(ctx context.Context, ids []string) ([]booking.Resource, error) {
	a := agency.From(ctx).ID
	c.watch.mu.Lock()
	defer c.watch.mu.Unlock()
	w := c.watch.by[a]
	if w.at.IsZero() || time.Since(w.at) > watchTTL {
		list, err := c.Store.CalendarResources(ctx)
		if err != nil {
			return nil, fmt.Errorf("calendar resources: %w", err)
		}
		if c.watch.by == nil {
			c.watch.by = map[string]watched{}
		}
		w = watched{at: time.Now(), list: list}
		c.watch.by[a] = w
	}
	var out []booking.Resource
	for _, id := range ids {
		for _, r := range w.list {
			if r.ID == id {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// foreign is what remains of busy periods once the times of our own
// bookings are taken out: free/busy cannot tell our mirrored events from
// anyone else's, and the store already decides about ours (including one
// just cancelled whose event is not deleted yet, or the booking a
// reschedule replaces).
func foreign(busy []calendars.Interval, ours []booking.Span) []calendars.Interval {
	var out []calendars.Interval
	for _, p := range busy {
		rest := []calendars.Interval{p}
		for _, o := range ours {
			var next []calendars.Interval
			for _, r := range rest {
				if !o.Start.Before(r.End) || !o.End.After(r.Start) {
					next = append(next, r)
					continue
				}
				if r.Start.Before(o.Start) {
					next = append(next, calendars.Interval{Start: r.Start, End: o.Start})
				}
				if o.End.Before(r.End) {
					next = append(next, calendars.Interval{Start: o.End, End: r.End})
				}
			}
			rest = next
		}
		out = append(out, rest...)
	}
	return out
}

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }
