package graphtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// create serves POST .../calendar/events. A transactionId already on an
// event of the mailbox returns that event: the retried POST after a lost
// reply that Graph's transactionId exists for. Deleted Items count too
// (the worse case; Graph does not say).
func (g *Graph) create(r *http.Request) (int, any, error) {
	var in wireEvent
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&in); err != nil {
		return 0, nil, graphErr(http.StatusBadRequest, "RequestBodyRead", "Cannot read the request body.")
	}
	mailbox := r.PathValue("mailbox")
	if in.TransactionID != nil && *in.TransactionID != "" {
		for _, box := range []map[string]*GraphEvent{g.box(mailbox), g.deleted[g.canonical(mailbox)]} {
			for _, ev := range box {
				if ev.TransactionID == *in.TransactionID {
					return http.StatusCreated, wire(ev, zoneOf(r), nil), nil
				}
			}
		}
	}
	ev := &GraphEvent{ID: newGraphID(), ShowAs: "busy", Created: time.Now().UTC(), Properties: map[string]string{}}
	if in.TransactionID != nil {
		ev.TransactionID = *in.TransactionID
	}
	if err := apply(ev, in); err != nil {
		return 0, nil, err
	}
	if ev.Start.IsZero() || ev.End.IsZero() {
		return 0, nil, graphErr(http.StatusBadRequest, "ErrorInvalidRequest", "start and end are required")
	}
	g.stamp(mailbox, ev)
	g.box(mailbox)[ev.ID] = ev
	return http.StatusCreated, wire(ev, zoneOf(r), nil), nil
}

// apply overlays the fields present in in onto ev.
func apply(ev *GraphEvent, in wireEvent) error {
	if in.Subject != nil {
		ev.Subject = *in.Subject
	}
	if in.Body != nil {
		ev.Body = in.Body.Content
	}
	if in.Location != nil {
		ev.Location = in.Location.DisplayName
	}
	if in.ShowAs != nil {
		ev.ShowAs = *in.ShowAs
	}
	if in.Start != nil || in.End != nil {
		start, zone, err := orKeep(in.Start, ev.Start, ev.TimeZone)
		if err != nil {
			return err
		}
		end, _, err := orKeep(in.End, ev.End, ev.TimeZone)
		if err != nil {
			return err
		}
		if !start.Before(end) {
			return graphErr(http.StatusBadRequest, "ErrorInvalidRequest", "The end time must be after the start time.")
		}
		ev.Start, ev.End, ev.TimeZone = start.UTC(), end.UTC(), zone
	}
	if in.Attendees != nil {
		ev.Attendees = nil
		for _, a := range in.Attendees {
			ev.Attendees = append(ev.Attendees, a.EmailAddress.Address)
		}
	}
	for _, p := range in.Properties {
		ev.Properties[p.ID] = p.Value
	}
	return nil
}

func orKeep(t *wireTime, cur time.Time, zone string) (time.Time, string, error) {
	if t == nil {
		return cur, zone, nil
	}
	return t.instant()
}

// list serves GET .../events with the marker $filter.
func (g *Graph) list(r *http.Request) (int, any, error) {
	props, err := expanded(r)
	if err != nil {
		return 0, nil, err
	}
	var match func(*GraphEvent) bool
	if f := r.URL.Query().Get("$filter"); f != "" {
		m := markerFilter.FindStringSubmatch(f)
		if m == nil {
			return 0, nil, graphErr(http.StatusBadRequest, "ErrorInvalidUrlQueryFilter", "The query filter contains one or more invalid nodes.")
		}
		id, _ := literalAfter(m[1], "")
		value, _ := literalAfter(m[2], "")
		match = func(ev *GraphEvent) bool { return propertyIs(ev, id, value) }
	}
	out := []wireEvent{}
	for _, ev := range g.sorted(r.PathValue("mailbox")) {
		if match == nil || match(ev) {
			out = append(out, wire(ev, zoneOf(r), props))
		}
	}
	return http.StatusOK, map[string]any{"value": out}, nil
}

// propertyIs matches a marker $filter: Graph documents that filtering on
// an extended property's value ignores case.
func propertyIs(ev *GraphEvent, id, value string) bool {
	for k, v := range ev.Properties {
		if strings.EqualFold(k, id) && strings.EqualFold(v, value) {
			return true
		}
	}
	return false
}

func (g *Graph) find(r *http.Request) (*GraphEvent, error) {
	ev, ok := g.box(r.PathValue("mailbox"))[r.PathValue("id")]
	if !ok {
		return nil, graphErr(http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
	}
	return ev, nil
}

func (g *Graph) get(r *http.Request) (int, any, error) {
	props, err := expanded(r)
	if err != nil {
		return 0, nil, err
	}
	ev, err := g.find(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire(ev, zoneOf(r), props), nil
}

// matches applies If-Match, after a StaleETag fault has changed the event
// the way a person editing it in between would.
func (g *Graph) matches(r *http.Request, ev *GraphEvent) error {
	if fakeserver.FaultOf(r).StaleETag {
		g.stamp(r.PathValue("mailbox"), ev)
	}
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != ev.ETag() {
		return graphErr(http.StatusPreconditionFailed, "ErrorIrresolvableConflict",
			"The send or update operation could not be performed because the change key passed in the request does not match the current change key for the item.")
	}
	return nil
}

// update serves PATCH .../events/{id}; a transactionId cannot change.
func (g *Graph) update(r *http.Request) (int, any, error) {
	ev, err := g.find(r)
	if err != nil {
		return 0, nil, err
	}
	if err := g.matches(r, ev); err != nil {
		return 0, nil, err
	}
	var in wireEvent
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&in); err != nil {
		return 0, nil, graphErr(http.StatusBadRequest, "RequestBodyRead", "Cannot read the request body.")
	}
	if in.TransactionID != nil && *in.TransactionID != ev.TransactionID {
		return 0, nil, graphErr(http.StatusBadRequest, "ErrorInvalidRequest", "The transactionId of an event cannot be changed.")
	}
	next := *ev
	next.Properties = map[string]string{}
	for k, v := range ev.Properties {
		next.Properties[k] = v
	}
	if err := apply(&next, in); err != nil {
		return 0, nil, err
	}
	g.stamp(r.PathValue("mailbox"), &next)
	g.box(r.PathValue("mailbox"))[next.ID] = &next
	return http.StatusOK, wire(&next, zoneOf(r), nil), nil
}

// delete serves DELETE .../events/{id}: the event moves to Deleted
// Items, and a second delete is 404.
func (g *Graph) delete(r *http.Request) (int, any, error) {
	ev, err := g.find(r)
	if err != nil {
		return 0, nil, err
	}
	if err := g.matches(r, ev); err != nil {
		return 0, nil, err
	}
	g.remove(r.PathValue("mailbox"), ev.ID)
	return http.StatusNoContent, nil, nil
}

// calendarView serves the events overlapping [startDateTime,
// endDateTime), $top at a time, with an absolute @odata.nextLink.
func (g *Graph) calendarView(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("startDateTime"))
	to, err2 := time.Parse(time.RFC3339, q.Get("endDateTime"))
	if err1 != nil || err2 != nil {
		return 0, nil, graphErr(http.StatusBadRequest, "ErrorInvalidParameter", "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.")
	}
	props, err := expanded(r)
	if err != nil {
		return 0, nil, err
	}
	top, skip := 10, 0
	if v := q.Get("$top"); v != "" {
		if top, err = strconv.Atoi(v); err != nil || top < 1 {
			return 0, nil, graphErr(http.StatusBadRequest, "BadRequest", "Invalid $top value.")
		}
	}
	if v := q.Get("$skip"); v != "" {
		if skip, err = strconv.Atoi(v); err != nil || skip < 0 {
			return 0, nil, graphErr(http.StatusBadRequest, "BadRequest", "Invalid $skip value.")
		}
	}
	var in []*GraphEvent
	for _, ev := range g.sorted(r.PathValue("mailbox")) {
		if ev.Start.Before(to) && ev.End.After(from) {
			in = append(in, ev)
		}
	}
	out := map[string]any{}
	page := []wireEvent{}
	for i := skip; i < len(in) && i < skip+top; i++ {
		page = append(page, wire(in[i], zoneOf(r), props))
	}
	out["value"] = page
	if skip+top < len(in) {
		next := *r.URL
		nq := next.Query()
		nq.Set("$skip", strconv.Itoa(skip+top))
		next.RawQuery = nq.Encode()
		out["@odata.nextLink"] = (&url.URL{Scheme: "http", Host: r.Host, Path: next.Path, RawQuery: next.RawQuery}).String()
	}
	return http.StatusOK, out, nil
}

// getSchedule serves calendar/getSchedule: for each mailbox asked, the
// items that are not free overlapping [startTime, endTime), or an error
// for a mailbox the tenant lacks; the request fails only as a whole.
func (g *Graph) getSchedule(r *http.Request) (int, any, error) {
	var in struct {
		Schedules []string  `json:"schedules"`
		StartTime *wireTime `json:"startTime"`
		EndTime   *wireTime `json:"endTime"`
		Interval  int       `json:"availabilityViewInterval"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&in); err != nil {
		return 0, nil, graphErr(http.StatusBadRequest, "RequestBodyRead", "Cannot read the request body.")
	}
	from, _, err := in.StartTime.instant()
	if err != nil {
		return 0, nil, err
	}
	to, _, err := in.EndTime.instant()
	if err != nil {
		return 0, nil, err
	}
	if len(in.Schedules) == 0 || !from.Before(to) {
		return 0, nil, graphErr(http.StatusBadRequest, "ErrorInvalidParameter", "schedules and a time window are required")
	}
	loc := zoneOf(r)
	out := []map[string]any{}
	for _, mb := range in.Schedules {
		if !g.exists(mb) {
			out = append(out, map[string]any{"scheduleId": mb, "error": map[string]string{
				"message": "The specified mailbox could not be found.", "responseCode": "ErrorMailRecipientNotFound"}})
			continue
		}
		items := []map[string]any{}
		for _, ev := range g.sorted(mb) {
			if ev.ShowAs == "free" || !ev.Start.Before(to) || !ev.End.After(from) {
				continue
			}
			items = append(items, map[string]any{"status": ev.ShowAs, "subject": ev.Subject,
				"start": wireTime{DateTime: ev.Start.In(loc).Format(graphWall), TimeZone: loc.String()},
				"end":   wireTime{DateTime: ev.End.In(loc).Format(graphWall), TimeZone: loc.String()}})
		}
		// scheduleId is the mailbox's SMTP address, whatever alias asked.
		out = append(out, map[string]any{"scheduleId": g.address(mb), "scheduleItems": items})
	}
	return http.StatusOK, map[string]any{"value": out}, nil
}
