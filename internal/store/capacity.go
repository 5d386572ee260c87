package store

import (
	"slices"
	"time"
)

// Span is a half-open interval [Start, End), like tstzrange's default: a
// booking's time, or what it occupies with its buffers.
type Span struct {
	Start, End time.Time
}

func (s Span) overlaps(o Span) bool { return s.Start.Before(o.End) && o.Start.Before(s.End) }

// peak returns the largest number of others in force at one instant within
// win, and the first window where that many are. Counting rows that merely
// overlap win would be wrong for capacity above one: two bookings can each
// overlap the window without overlapping each other.
func peak(win Span, others []Span) (int, Span) {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(others))
	for _, o := range others {
		start, end := later(o.Start, win.Start), earlier(o.End, win.End)
		if start.Before(end) {
			edges = append(edges, edge{start, +1}, edge{end, -1})
		}
	}
	// Ends sort before starts at the same instant: ranges are half-open, so
	// one booking ending at 10:00 and another starting then do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	best, cur := 0, 0
	var at Span
	for i, e := range edges {
		cur += e.delta
		if cur > best {
			best = cur
			at = Span{Start: e.at, End: edges[i+1].at}
		}
	}
	return best, at
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
