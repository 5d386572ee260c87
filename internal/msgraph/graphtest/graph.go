package graphtest

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Graph is an in-memory Microsoft Graph (v1.0) calendar server with the
// Microsoft identity platform's token endpoint beside it. It reproduces
// what bookingsaga's adapter depends on: app-only tokens from client
// credentials (a secret, or a certificate's signed assertion), 401 without
// one, 404 for a mailbox the tenant lacks, server-assigned event ids,
// transactionId making a repeated create return the first event,
// single-value extended properties found by $filter (values compared
// without case, as Graph documents) and returned by $expand, weak etags
// with 412 on a stale If-Match, deletes that move the event to Deleted
// Items (404 after), mailbox aliases (getSchedule answers with the
// primary address), calendarView and getSchedule over a time range, and
// the Graph error envelope.
//
// Where Graph's behaviour is undocumented the fake takes the worse case:
// a transactionId also matches an event in Deleted Items, so a create
// repeating one returns the deleted event.
//
// Serve it over HTTP/1.1; the adapter's endpoint is URL()+"/v1.0" and its
// login authority URL().
type Graph struct {
	// Faults are injected (Inject, InjectRandom, ClearFaults, Release,
	// Calls) by operation: token, events.create, events.list, events.get,
	// events.update, events.delete, calendarView and getSchedule.
	fakeserver.Faults
	app GraphApp

	mu        sync.Mutex
	seq       int64
	mailboxes map[string]map[string]*GraphEvent // mailbox (lower case) → event id → event
	// deleted is each mailbox's Deleted Items: gone from the calendar,
	// still remembered by transactionId.
	deleted map[string]map[string]*GraphEvent
	primary map[string]string    // address or alias (lower case) → primary address as given
	tokens  map[string]time.Time // access token → expiry
	journal fakeserver.Journal
}

// GraphApp is the one app registration the fake's tenant knows.
type GraphApp struct {
	TenantID, ClientID string
	// ClientSecret, when set, is accepted as the app's credential.
	ClientSecret string
	// Certificate, when set, is the certificate whose key must sign a
	// client assertion, named by its thumbprint.
	Certificate *x509.Certificate
}

// GraphEvent is an event as the fake stores it.
type GraphEvent struct {
	ID            string            `json:"id"`
	ChangeKey     string            `json:"changeKey"`
	Subject       string            `json:"subject"`
	Body          string            `json:"body"`
	Start         time.Time         `json:"start"`
	End           time.Time         `json:"end"`
	TimeZone      string            `json:"timeZone"`
	Location      string            `json:"location"`
	ShowAs        string            `json:"showAs"`
	TransactionID string            `json:"transactionId,omitempty"`
	Attendees     []string          `json:"attendees,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
	Created       time.Time         `json:"created"`
	Modified      time.Time         `json:"modified"`
}

// ETag is the event's @odata.etag: a weak tag over its change key.
func (e *GraphEvent) ETag() string { return `W/"` + e.ChangeKey + `"` }

// graphChange is one write as the journal logs it: the event as left, or
// its id when deleted.
type graphChange struct {
	Mailbox string      `json:"mailbox"`
	Event   *GraphEvent `json:"event,omitempty"`
	Deleted string      `json:"deleted,omitempty"`
	Seq     int64       `json:"seq"`
}

// NewGraph returns a fake tenant with one app and the given mailboxes.
func NewGraph(app GraphApp, mailboxes ...string) *Graph {
	g := &Graph{app: app, mailboxes: map[string]map[string]*GraphEvent{}, deleted: map[string]map[string]*GraphEvent{},
		primary: map[string]string{}, tokens: map[string]time.Time{}}
	for _, mb := range mailboxes {
		g.AddMailbox(mb)
	}
	return g
}

// Put stores an event directly, as a person typing it into Outlook would;
// it returns the event's id.
func (g *Graph) Put(mailbox string, ev GraphEvent) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ev.ID == "" {
		ev.ID = newGraphID()
	}
	if ev.ShowAs == "" {
		ev.ShowAs = "busy"
	}
	ev.Created = time.Now().UTC()
	g.stamp(mailbox, &ev)
	g.box(mailbox)[ev.ID] = &ev
	return ev.ID
}

// Remove deletes an event directly, as a person would in Outlook.
func (g *Graph) Remove(mailbox, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.remove(mailbox, id)
}

// remove moves an event to Deleted Items; callers hold g.mu.
func (g *Graph) remove(mailbox, id string) {
	key := g.canonical(mailbox)
	if ev, ok := g.mailboxes[key][id]; ok {
		if g.deleted[key] == nil {
			g.deleted[key] = map[string]*GraphEvent{}
		}
		g.deleted[key][id] = ev
	}
	delete(g.box(mailbox), id)
	g.journal.Stage(graphChange{Mailbox: key, Deleted: id, Seq: g.seq})
}

// RevokeTokens invalidates every access token issued, as a tenant's
// admin revoking the app's sessions (or a token's early expiry) would.
func (g *Graph) RevokeTokens() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.tokens)
}

// Events returns copies of a mailbox's events by start, then id.
func (g *Graph) Events(mailbox string) []GraphEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []GraphEvent
	for _, ev := range g.sorted(mailbox) {
		out = append(out, *ev)
	}
	return out
}

// EventsWith is the mailbox's events whose property name is value.
func (g *Graph) EventsWith(mailbox, name, value string) []GraphEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	var found []*GraphEvent
	for _, ev := range g.mailboxes[g.canonical(mailbox)] { // filtered before sorting: a poller's read of thousands
		if ev.Properties[name] == value {
			found = append(found, ev)
		}
	}
	out := []GraphEvent{}
	for _, ev := range inOrder(found) {
		out = append(out, *ev)
	}
	return out
}

// AddMailbox makes a user or room mailbox exist in the tenant, reachable
// by its primary address and by each alias (a user principal name, say).
func (g *Graph) AddMailbox(primary string, aliases ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range append([]string{primary}, aliases...) {
		g.primary[strings.ToLower(a)] = primary
	}
	g.box(primary)
}

// canonical is the key of the mailbox an address or alias names.
func (g *Graph) canonical(mailbox string) string {
	if p, ok := g.primary[strings.ToLower(mailbox)]; ok {
		return strings.ToLower(p)
	}
	return strings.ToLower(mailbox)
}

// address is the mailbox's primary address as given; one known only from
// a saved file (which keeps keys in lower case) answers with its key.
func (g *Graph) address(mailbox string) string {
	if p, ok := g.primary[strings.ToLower(mailbox)]; ok {
		return p
	}
	return g.canonical(mailbox)
}

// exists reports whether the tenant has the mailbox.
func (g *Graph) exists(mailbox string) bool {
	_, ok := g.mailboxes[g.canonical(mailbox)]
	return ok
}

func (g *Graph) box(mailbox string) map[string]*GraphEvent {
	key := g.canonical(mailbox)
	b, ok := g.mailboxes[key]
	if !ok {
		b = map[string]*GraphEvent{}
		g.mailboxes[key] = b
	}
	return b
}

// stamp gives ev a new change key and modification time and marks it for
// the journal; callers hold g.mu.
func (g *Graph) stamp(mailbox string, ev *GraphEvent) {
	g.seq++
	ev.ChangeKey = base64.StdEncoding.EncodeToString([]byte("ck" + strconv.FormatInt(g.seq, 10)))
	ev.Modified = time.Now().UTC()
	g.journal.Stage(graphChange{Mailbox: g.canonical(mailbox), Event: ev, Seq: g.seq})
}

func (g *Graph) sorted(mailbox string) []*GraphEvent {
	box := g.mailboxes[g.canonical(mailbox)]
	out := make([]*GraphEvent, 0, len(box))
	for _, ev := range box {
		out = append(out, ev)
	}
	return inOrder(out)
}

// inOrder sorts events by start, then id.
func inOrder(out []*GraphEvent) []*GraphEvent {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// graphState is what Save keeps.
type graphState struct {
	Seq       int64                             `json:"seq"`
	Mailboxes map[string]map[string]*GraphEvent `json:"mailboxes"`
	Journal   int64                             `json:"journal"`
}

// Save writes every mailbox to path, so a dev stack keeps them across
// restarts.
func (g *Graph) Save(path string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.journal.Save(path, graphState{Seq: g.seq, Mailboxes: g.mailboxes, Journal: g.journal.Seq})
}

// Keep restores what Save and the journal kept at path (a missing file
// leaves it as it is), then logs each write through the API beside
// path, so a dev stack keeps it across a crash, not only a clean stop.
func (g *Graph) Keep(path string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := graphState{Mailboxes: map[string]map[string]*GraphEvent{}}
	return fakeserver.Restore(&g.journal, path, "graph", &st, &st.Journal, func() {
		for mb, evs := range st.Mailboxes {
			g.mailboxes[mb] = evs
		}
		g.seq = max(g.seq, st.Seq)
	}, func(ch graphChange) {
		if ch.Deleted != "" {
			delete(g.box(ch.Mailbox), ch.Deleted)
		} else {
			g.box(ch.Mailbox)[ch.Event.ID] = ch.Event
		}
		g.seq = max(g.seq, ch.Seq)
	})
}

// newGraphID is an id shaped like Exchange's: long, opaque, URL-safe
// base64 with a leading "AAMk".
func newGraphID() string {
	b := make([]byte, 48)
	_, _ = rand.Read(b)
	return "AAMk" + base64.RawURLEncoding.EncodeToString(b)
}
