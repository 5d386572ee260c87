package gcaltest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Calendar is an in-memory Google Calendar v3 server. It reproduces the
// behaviour bookingsaga's adapter depends on: 409 on a duplicate event id
// (also for deleted events), deleted events kept as "cancelled" tombstones,
// 410 when deleting a tombstone, 400 on an invalid id, 412 on a stale
// If-Match, and time-range filtering in events.list and freeBusy.
//
// Serve it over HTTP/1.1 and point the real client at URL()+"/calendar/v3/".
type Calendar struct {
	// Faults are injected (Inject, InjectRandom, ClearFaults, Release,
	// Calls) by operation: events.insert, events.get, events.update,
	// events.patch, events.delete, events.list and freebusy.query.
	fakeserver.Faults

	mu      sync.Mutex
	etagSeq int64
	events  map[string]map[string]*calendar.Event // calendar id → event id → event
	journal fakeserver.Journal
}

// calendarChange is one event as a write left it, as the journal logs it.
type calendarChange struct {
	Calendar string          `json:"calendar"`
	Event    *calendar.Event `json:"event"`
	EtagSeq  int64           `json:"etag_seq"`
}

// NewCalendar returns an empty fake calendar server.
func NewCalendar() *Calendar {
	return &Calendar{events: map[string]map[string]*calendar.Event{}}
}

// Put stores an event directly, as a person editing the calendar by hand
// would, bypassing faults and the API's checks.
func (c *Calendar) Put(calendarID string, ev *calendar.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := *ev
	if cp.Id == "" {
		cp.Id = newEventID()
	}
	if cp.Status == "" {
		cp.Status = "confirmed"
	}
	c.stamp(calendarID, &cp)
	c.calendar(calendarID)[cp.Id] = &cp
}

// Events returns copies of every stored event of one calendar, tombstones
// included, ordered by start then id.
func (c *Calendar) Events(calendarID string) []calendar.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]calendar.Event, 0, len(c.events[calendarID]))
	for _, ev := range c.sorted(calendarID) {
		out = append(out, *ev)
	}
	return out
}

// calendarState is what Save keeps: the events, the etag counter, and the
// journal's seq at the snapshot.
type calendarState struct {
	EtagSeq int64                                 `json:"etag_seq"`
	Events  map[string]map[string]*calendar.Event `json:"events"`
	Journal int64                                 `json:"journal"`
}

// Save writes every stored event to path, so a dev stack keeps its
// calendar across restarts.
func (c *Calendar) Save(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.journal.Save(path, c.state())
}

func (c *Calendar) state() calendarState {
	return calendarState{EtagSeq: c.etagSeq, Events: c.events, Journal: c.journal.Seq}
}

// Keep restores what Save and the journal kept at path (a missing file
// leaves it as it is), then logs each write through the API beside
// path, so a dev stack keeps it across a crash, not only a clean stop.
func (c *Calendar) Keep(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := calendarState{Events: map[string]map[string]*calendar.Event{}}
	return fakeserver.Restore(&c.journal, path, "calendar", &st, &st.Journal, func() {
		c.etagSeq, c.events = st.EtagSeq, st.Events
	}, func(ch calendarChange) {
		c.calendar(ch.Calendar)[ch.Event.Id] = ch.Event
		c.etagSeq = max(c.etagSeq, ch.EtagSeq)
	})
}

// ServeHTTP routes the Calendar v3 REST paths and the fake's admin paths.
func (c *Calendar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mux().ServeHTTP(w, r)
}

func (c *Calendar) mux() *http.ServeMux {
	const base = "/calendar/v3/calendars/{cal}/events"
	m := http.NewServeMux()
	m.HandleFunc("POST "+base, c.op("events.insert", c.insert))
	m.HandleFunc("GET "+base, c.op("events.list", c.list))
	m.HandleFunc("GET "+base+"/{id}", c.op("events.get", c.get))
	m.HandleFunc("PUT "+base+"/{id}", c.op("events.update", c.update))
	m.HandleFunc("PATCH "+base+"/{id}", c.op("events.patch", c.patch))
	m.HandleFunc("DELETE "+base+"/{id}", c.op("events.delete", c.delete))
	m.HandleFunc("POST /calendar/v3/freeBusy", c.op("freebusy.query", c.freeBusy))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&c.Faults))
	m.HandleFunc("GET /_fake/events/{cal}", func(w http.ResponseWriter, r *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, c.Events(r.PathValue("cal")))
	})
	return m
}

func (c *Calendar) op(name string, h fakeserver.Handler) http.HandlerFunc {
	return fakeserver.Serve(&c.Faults, &c.mu, &c.journal, name, writeGoogleError, h)
}

func gerr(code int, reason, format string, args ...any) error {
	return &fakeserver.APIError{Status: code, Code: reason, Message: fmt.Sprintf(format, args...)}
}

// writeGoogleError writes the JSON error envelope googleapi.CheckResponse parses.
func writeGoogleError(w http.ResponseWriter, status int, reason, message string) {
	fakeserver.WriteJSON(w, status, map[string]any{"error": map[string]any{
		"code":    status,
		"message": message,
		"errors":  []map[string]string{{"domain": "global", "reason": reason, "message": message}},
	}})
}

func (c *Calendar) insert(r *http.Request) (int, any, error) {
	var ev calendar.Event
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&ev); err != nil {
		return 0, nil, gerr(http.StatusBadRequest, "parseError", "Parse Error")
	}
	if ev.Id == "" {
		ev.Id = newEventID()
	}
	if !validEventID(ev.Id) {
		return 0, nil, gerr(http.StatusBadRequest, "invalid", "Invalid resource id value.")
	}
	if err := checkTimes(&ev); err != nil {
		return 0, nil, err
	}
	cal := c.calendar(r.PathValue("cal"))
	if _, ok := cal[ev.Id]; ok {
		// Google answers 409 for tombstones too: an id is never reusable.
		return 0, nil, gerr(http.StatusConflict, "duplicate", "The requested identifier already exists.")
	}
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	ev.Created = time.Now().UTC().Format(time.RFC3339Nano)
	c.stamp(r.PathValue("cal"), &ev)
	cal[ev.Id] = &ev
	return http.StatusOK, ev, nil
}

func (c *Calendar) get(r *http.Request) (int, any, error) {
	ev, err := c.find(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, *ev, nil
}

func (c *Calendar) update(r *http.Request) (int, any, error) {
	return c.replace(r, func(old *calendar.Event, body []byte) (*calendar.Event, error) {
		var ev calendar.Event
		return &ev, json.Unmarshal(body, &ev)
	})
}

// patch overlays the fields present in the body onto the stored event.
func (c *Calendar) patch(r *http.Request) (int, any, error) {
	return c.replace(r, func(old *calendar.Event, body []byte) (*calendar.Event, error) {
		merged := map[string]any{}
		oldJSON, _ := json.Marshal(old)
		if err := json.Unmarshal(oldJSON, &merged); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(body, &merged); err != nil {
			return nil, err
		}
		all, _ := json.Marshal(merged)
		var ev calendar.Event
		return &ev, json.Unmarshal(all, &ev)
	})
}

func (c *Calendar) replace(r *http.Request, build func(*calendar.Event, []byte) (*calendar.Event, error)) (int, any, error) {
	old, err := c.find(r)
	if err != nil {
		return 0, nil, err
	}
	if err := checkIfMatch(r, old); err != nil {
		return 0, nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return 0, nil, err
	}
	ev, err := build(old, body)
	if err != nil {
		return 0, nil, gerr(http.StatusBadRequest, "parseError", "Parse Error")
	}
	if err := checkTimes(ev); err != nil {
		return 0, nil, err
	}
	ev.Id, ev.Created = old.Id, old.Created
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	c.stamp(r.PathValue("cal"), ev)
	c.calendar(r.PathValue("cal"))[ev.Id] = ev
	return http.StatusOK, *ev, nil
}

func (c *Calendar) delete(r *http.Request) (int, any, error) {
	ev, err := c.find(r)
	if err != nil {
		return 0, nil, err
	}
	if ev.Status == "cancelled" {
		return 0, nil, gerr(http.StatusGone, "deleted", "Resource has been deleted")
	}
	if err := checkIfMatch(r, ev); err != nil {
		return 0, nil, err
	}
	ev.Status = "cancelled"
	c.stamp(r.PathValue("cal"), ev)
	return http.StatusNoContent, nil, nil
}

func (c *Calendar) find(r *http.Request) (*calendar.Event, error) {
	ev, ok := c.calendar(r.PathValue("cal"))[r.PathValue("id")]
	if !ok {
		return nil, gerr(http.StatusNotFound, "notFound", "Not Found")
	}
	return ev, nil
}

func checkIfMatch(r *http.Request, ev *calendar.Event) error {
	if m := r.Header.Get("If-Match"); m != "" && m != ev.Etag {
		return gerr(http.StatusPreconditionFailed, "conditionNotMet", "Precondition Failed")
	}
	return nil
}

func readBody(r *http.Request) ([]byte, error) {
	var raw json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&raw); err != nil {
		return nil, gerr(http.StatusBadRequest, "parseError", "Parse Error")
	}
	return raw, nil
}

// stamp gives ev a fresh etag and update time, and marks it for the
// journal; callers hold c.mu.
func (c *Calendar) stamp(cal string, ev *calendar.Event) {
	c.journal.Stage(calendarChange{Calendar: cal, Event: ev, EtagSeq: c.etagSeq + 1})
	c.etagSeq++
	ev.Etag = strconv.Quote(strconv.FormatInt(c.etagSeq, 10))
	ev.Updated = time.Now().UTC().Format(time.RFC3339Nano)
	ev.Kind = "calendar#event"
}

func (c *Calendar) calendar(id string) map[string]*calendar.Event {
	cal, ok := c.events[id]
	if !ok {
		cal = map[string]*calendar.Event{}
		c.events[id] = cal
	}
	return cal
}

// sorted returns one calendar's events by start, then id; callers hold c.mu.
func (c *Calendar) sorted(calendarID string) []*calendar.Event {
	out := make([]*calendar.Event, 0, len(c.events[calendarID]))
	for _, ev := range c.events[calendarID] {
		out = append(out, ev)
	}
	sort.Slice(out, func(i, j int) bool {
		si, sj := eventStart(out[i]), eventStart(out[j])
		if !si.Equal(sj) {
			return si.Before(sj)
		}
		return out[i].Id < out[j].Id
	})
	return out
}

// validEventID applies Google's rule: base32hex characters (a–v, 0–9),
// 5 to 1024 of them.
func validEventID(id string) bool {
	if len(id) < 5 || len(id) > 1024 {
		return false
	}
	for _, ch := range id {
		if !(ch >= 'a' && ch <= 'v' || ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

func newEventID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	b := make([]byte, 26)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
