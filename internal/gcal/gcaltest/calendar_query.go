package gcaltest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// list serves events.list with timeMin/timeMax (an event matches when it
// ends after timeMin and starts before timeMax, as Google does),
// showDeleted, privateExtendedProperty=key=value, maxResults and pageToken.
func (c *Calendar) list(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	from, to, err := queryRange(q.Get("timeMin"), q.Get("timeMax"))
	if err != nil {
		return 0, nil, err
	}
	page, size := 0, 250
	if v := q.Get("maxResults"); v != "" {
		if size, err = strconv.Atoi(v); err != nil || size < 1 {
			return 0, nil, gerr(http.StatusBadRequest, "invalid", "Invalid maxResults")
		}
	}
	if v := q.Get("pageToken"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 0 {
			return 0, nil, gerr(http.StatusBadRequest, "invalid", "Invalid pageToken")
		}
	}
	var items []*calendar.Event
	for _, ev := range c.sorted(r.PathValue("cal")) {
		if ev.Status == "cancelled" && q.Get("showDeleted") != "true" {
			continue
		}
		if !overlaps(ev, from, to) || !hasPrivate(ev, q["privateExtendedProperty"]) {
			continue
		}
		items = append(items, ev)
	}
	out := calendar.Events{Kind: "calendar#events", Items: []*calendar.Event{}}
	for i := page; i < len(items) && i < page+size; i++ {
		cp := *items[i]
		out.Items = append(out.Items, &cp)
	}
	if page+size < len(items) {
		out.NextPageToken = strconv.Itoa(page + size)
	}
	return http.StatusOK, out, nil
}

// freeBusy serves freebusy.query: the merged busy periods of opaque, live
// events, clipped to the asked range.
func (c *Calendar) freeBusy(r *http.Request) (int, any, error) {
	var req calendar.FreeBusyRequest
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&req); err != nil {
		return 0, nil, gerr(http.StatusBadRequest, "parseError", "Parse Error")
	}
	from, to, err := queryRange(req.TimeMin, req.TimeMax)
	if err != nil {
		return 0, nil, err
	}
	if req.TimeMin == "" || req.TimeMax == "" {
		return 0, nil, gerr(http.StatusBadRequest, "required", "Missing time range.")
	}
	out := calendar.FreeBusyResponse{Kind: "calendar#freeBusy", TimeMin: req.TimeMin, TimeMax: req.TimeMax,
		Calendars: map[string]calendar.FreeBusyCalendar{}}
	for _, item := range req.Items {
		out.Calendars[item.Id] = calendar.FreeBusyCalendar{Busy: c.busy(item.Id, from, to)}
	}
	return http.StatusOK, out, nil
}

func (c *Calendar) busy(calendarID string, from, to time.Time) []*calendar.TimePeriod {
	type span struct{ s, e time.Time }
	var spans []span
	// Filtered first, then sorted: the calendar may hold thousands.
	for _, ev := range c.events[calendarID] {
		if ev.Status == "cancelled" || ev.Transparency == "transparent" || !overlaps(ev, from, to) {
			continue
		}
		s, e := eventStart(ev), eventEnd(ev)
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		spans = append(spans, span{s, e})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].s.Before(spans[j].s) })
	out := []*calendar.TimePeriod{}
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && !spans[i].s.After(cur.e); i++ {
			if spans[i].e.After(cur.e) {
				cur.e = spans[i].e
			}
		}
		out = append(out, &calendar.TimePeriod{Start: cur.s.UTC().Format(time.RFC3339), End: cur.e.UTC().Format(time.RFC3339)})
	}
	return out
}

func queryRange(minS, maxS string) (from, to time.Time, err error) {
	from, to = time.Time{}, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if minS != "" {
		if from, err = time.Parse(time.RFC3339, minS); err != nil {
			return from, to, gerr(http.StatusBadRequest, "badRequest", "Bad Request: timeMin")
		}
	}
	if maxS != "" {
		if to, err = time.Parse(time.RFC3339, maxS); err != nil {
			return from, to, gerr(http.StatusBadRequest, "badRequest", "Bad Request: timeMax")
		}
	}
	if !from.Before(to) {
		return from, to, gerr(http.StatusBadRequest, "timeRangeEmpty", "The specified time range is empty.")
	}
	return from, to, nil
}

func overlaps(ev *calendar.Event, from, to time.Time) bool {
	return eventEnd(ev).After(from) && eventStart(ev).Before(to)
}

func hasPrivate(ev *calendar.Event, filters []string) bool {
	for _, f := range filters {
		k, v, _ := strings.Cut(f, "=")
		if ev.ExtendedProperties == nil || ev.ExtendedProperties.Private[k] != v {
			return false
		}
	}
	return true
}

// checkTimes requires a start and an end, and the end after the start.
func checkTimes(ev *calendar.Event) error {
	if ev.Start == nil || ev.End == nil {
		return gerr(http.StatusBadRequest, "required", "Missing end time.")
	}
	s, e := eventStart(ev), eventEnd(ev)
	if s.IsZero() || e.IsZero() {
		return gerr(http.StatusBadRequest, "invalid", "Invalid start or end time.")
	}
	if !s.Before(e) {
		return gerr(http.StatusBadRequest, "timeRangeEmpty", "The specified time range is empty.")
	}
	return nil
}

func eventStart(ev *calendar.Event) time.Time { return eventTime(ev.Start) }
func eventEnd(ev *calendar.Event) time.Time   { return eventTime(ev.End) }

// eventTime reads a timed or an all-day boundary; all-day dates are taken
// at UTC midnight, which is close enough for a fake.
func eventTime(t *calendar.EventDateTime) time.Time {
	if t == nil {
		return time.Time{}
	}
	if t.DateTime != "" {
		v, _ := time.Parse(time.RFC3339, t.DateTime)
		return v
	}
	v, _ := time.Parse("2006-01-02", t.Date)
	return v
}
