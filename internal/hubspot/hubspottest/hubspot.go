// Package hubspottest is a HubSpot account in memory, for the adapter's
// tests and the dev stack: the CRM v3 endpoints the adapter calls
// (meeting and contact properties and their groups, the batch upsert by
// a unique property and the read by one, the contacts' search and GDPR
// delete, and the v4 default association of a meeting with a contact),
// answered as HubSpot's OpenAPI
// documents and usage guidelines say: its error bodies and categories, its
// ten-second and daily limits with their headers, and the shared fault
// injection (fakeserver).
package hubspottest

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Account is the fake. Its fault ops are groups.create,
// properties.create, meetings.upsert, meetings.get, contacts.upsert,
// contacts.get, contacts.search, contacts.gdpr-delete and
// associations.create.
type Account struct {
	fakeserver.Faults
	token string
	// PerTenSeconds and Daily are the private app's limits (HubSpot's
	// Free tier: 100 and 250,000).
	PerTenSeconds, Daily int
	// Now is the fake's clock, for the ten-second window.
	Now func() time.Time

	mu      sync.Mutex
	seq     int
	groups  map[string]map[string]bool     // by object type, then name
	props   map[string]map[string]property // custom properties by object type, then name
	objects map[string]map[string]*object  // by object type, then id
	// assoc are the contacts each meeting is associated with.
	assoc map[string]map[string]bool
	// merged maps a contact merged away to the one it became.
	merged  map[string]string
	window  []time.Time // calls in the last ten seconds
	today   int
	journal fakeserver.Journal
}

type property struct {
	Name, Label, Type, FieldType, GroupName string
	HasUniqueValue                          bool
}

// The object types the fake keeps.
const (
	meetings = "meetings"
	contacts = "contacts"
)

type object struct {
	ID                   string
	Properties           map[string]string
	CreatedAt, UpdatedAt time.Time
}

// Object is a meeting or a contact as the account holds it; a meeting's
// Contacts are those it is associated with.
type Object struct {
	ID         string
	Properties map[string]string
	Contacts   []string
}

// New is an empty account whose private app has token.
func New(token string) *Account {
	return &Account{token: token, PerTenSeconds: 100, Daily: 250000, Now: time.Now,
		groups:  map[string]map[string]bool{meetings: {}, contacts: {}},
		props:   map[string]map[string]property{meetings: {}, contacts: {}},
		objects: map[string]map[string]*object{meetings: {}, contacts: {}},
		assoc:   map[string]map[string]bool{}, merged: map[string]string{}}
}

// Meetings are the account's meetings, by id.
func (a *Account) Meetings() []Object { return a.list(meetings) }

// Contacts are the account's contacts, by id.
func (a *Account) Contacts() []Object { return a.list(contacts) }

func (a *Account) list(kind string) []Object {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Object, 0, len(a.objects[kind]))
	for _, o := range a.objects[kind] {
		props := make(map[string]string, len(o.Properties))
		for k, v := range o.Properties {
			props[k] = v
		}
		out = append(out, Object{ID: o.ID, Properties: props, Contacts: a.associated(o.ID)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (a *Account) associated(meetingID string) []string {
	var ids []string
	for id := range a.assoc[meetingID] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Delete removes the meeting whose property name has value, as a person
// in HubSpot would.
func (a *Account) Delete(name, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.find(meetings, name, value); m != nil {
		delete(a.objects[meetings], m.ID)
		delete(a.assoc, m.ID)
	}
}

// Edit sets properties on the meeting whose property name has value, as a
// person in HubSpot would.
func (a *Account) Edit(name, value string, props map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.find(meetings, name, value); m != nil {
		for k, v := range props {
			m.Properties[k] = v
		}
	}
}

// AddContact creates a contact as staff would, and returns its id.
func (a *Account) AddContact(props map[string]string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.create(contacts, a.Now().UTC())
	for k, v := range props {
		c.Properties[k] = v
	}
	return c.ID
}

// Merge merges contact loser into winner, as staff do in HubSpot: the
// loser's id reads as the winner, its meetings move to the winner, and
// the winner's hs_merged_object_ids lists it.
func (a *Account) Merge(winner, loser string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, l := a.objects[contacts][winner], a.objects[contacts][loser]
	if w == nil || l == nil || winner == loser {
		return
	}
	delete(a.objects[contacts], loser)
	a.merged[loser] = winner
	for id, merged := range a.merged {
		if merged == loser {
			a.merged[id] = winner
		}
	}
	w.Properties["hs_merged_object_ids"] = strings.TrimPrefix(w.Properties["hs_merged_object_ids"]+";"+loser, ";")
	for _, set := range a.assoc {
		if set[loser] {
			delete(set, loser)
			set[winner] = true
		}
	}
}

func (a *Account) find(kind, name, value string) *object {
	for _, o := range a.objects[kind] {
		if value != "" && o.Properties[name] == value {
			return o
		}
	}
	return nil
}

// ServeHTTP routes the API.
func (a *Account) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := http.NewServeMux()
	m.HandleFunc("POST /crm/v3/properties/{objectType}/groups", a.api("groups.create", a.createGroup))
	m.HandleFunc("POST /crm/v3/properties/{objectType}", a.api("properties.create", a.createProperty))
	for _, kind := range []string{meetings, contacts} {
		m.HandleFunc("POST /crm/v3/objects/"+kind+"/batch/upsert", a.api(kind+".upsert", a.upsert(kind)))
		m.HandleFunc("GET /crm/v3/objects/"+kind+"/{id}", a.api(kind+".get", a.get(kind)))
	}
	m.HandleFunc("POST /crm/v3/objects/contacts/search", a.api("contacts.search", a.search))
	m.HandleFunc("POST /crm/v3/objects/contacts/gdpr-delete", a.api("contacts.gdpr-delete", a.gdprDelete))
	m.HandleFunc("PUT /crm/v4/objects/meetings/{id}/associations/default/contacts/{contactId}", a.api("associations.create", a.associate))
	m.HandleFunc("DELETE /crm/v4/objects/meetings/{id}/associations/contacts/{contactId}", a.api("associations.delete", a.dissociate))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&a.Faults))
	a.admin(m)
	m.ServeHTTP(w, r)
}

// api checks the token and the limits, then serves op.
func (a *Account) api(op string, h fakeserver.Handler) http.HandlerFunc {
	next := fakeserver.Serve(&a.Faults, &a.mu, &a.journal, op, writeError, h)
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+a.token)) != 1 {
			writeError(w, http.StatusUnauthorized, "INVALID_AUTHENTICATION",
				"Authentication credentials not found. This API supports OAuth 2.0 authentication.")
			return
		}
		if !a.admit(w) {
			return
		}
		next(w, r)
	}
}

// admit counts the call against the limits and sets HubSpot's headers; a
// call over either is refused 429 with the policy's name.
func (a *Account) admit(w http.ResponseWriter) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.Now()
	kept := a.window[:0]
	for _, t := range a.window {
		if now.Sub(t) < 10*time.Second {
			kept = append(kept, t)
		}
	}
	a.window = kept
	h := w.Header()
	h.Set("X-HubSpot-RateLimit-Interval-Milliseconds", "10000")
	h.Set("X-HubSpot-RateLimit-Max", strconv.Itoa(a.PerTenSeconds))
	h.Set("X-HubSpot-RateLimit-Daily", strconv.Itoa(a.Daily))
	policy := ""
	switch {
	case a.today >= a.Daily:
		policy = "DAILY"
	case len(a.window) >= a.PerTenSeconds:
		policy = "TEN_SECONDLY_ROLLING"
	default:
		a.window, a.today = append(a.window, now), a.today+1
	}
	h.Set("X-HubSpot-RateLimit-Remaining", strconv.Itoa(a.PerTenSeconds-len(a.window)))
	h.Set("X-HubSpot-RateLimit-Daily-Remaining", strconv.Itoa(a.Daily-a.today))
	if policy == "" {
		return true
	}
	msg := "You have reached your ten_secondly_rolling limit."
	if policy == "DAILY" {
		msg = "You have reached your daily limit."
	}
	fakeserver.WriteJSON(w, http.StatusTooManyRequests, map[string]string{"status": "error", "message": msg,
		"errorType": "RATE_LIMIT", "correlationId": correlationID(), "policyName": policy, "category": "RATE_LIMITS"})
	return false
}

// writeError answers HubSpot's Error: category, correlationId, message.
func writeError(w http.ResponseWriter, status int, category, message string) {
	fakeserver.WriteJSON(w, status, map[string]string{"status": "error", "message": message,
		"correlationId": correlationID(), "category": category})
}

func correlationID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func refuse(status int, category, format string, args ...any) error {
	return &fakeserver.APIError{Status: status, Code: category, Message: fmt.Sprintf(format, args...)}
}
