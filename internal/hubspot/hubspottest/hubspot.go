// Package hubspottest is a HubSpot account in memory, for the adapter's
// tests and the dev stack: the CRM v3 endpoints the adapter calls
// (meeting properties and their group, the meetings' batch upsert by a
// unique property and the read by one), answered as HubSpot's OpenAPI
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
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Account is the fake. Its fault ops are groups.create,
// properties.create, meetings.upsert and meetings.get.
type Account struct {
	fakeserver.Faults
	token string
	// PerTenSeconds and Daily are the private app's limits (HubSpot's
	// Free tier: 100 and 250,000).
	PerTenSeconds, Daily int
	// Now is the fake's clock, for the ten-second window.
	Now func() time.Time

	mu       sync.Mutex
	seq      int
	groups   map[string]bool
	props    map[string]property // custom meeting properties by name
	meetings map[string]*meeting // by id
	window   []time.Time         // calls in the last ten seconds
	today    int
}

type property struct {
	Name, Label, Type, FieldType, GroupName string
	HasUniqueValue                          bool
}

type meeting struct {
	ID                   string
	Properties           map[string]string
	CreatedAt, UpdatedAt time.Time
}

// Meeting is a meeting as the account holds it.
type Meeting struct {
	ID         string
	Properties map[string]string
}

// New is an empty account whose private app has token.
func New(token string) *Account {
	return &Account{token: token, PerTenSeconds: 100, Daily: 250000, Now: time.Now,
		groups: map[string]bool{}, props: map[string]property{}, meetings: map[string]*meeting{}}
}

// Meetings are the account's meetings, by id.
func (a *Account) Meetings() []Meeting {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Meeting, 0, len(a.meetings))
	for _, m := range a.meetings {
		props := make(map[string]string, len(m.Properties))
		for k, v := range m.Properties {
			props[k] = v
		}
		out = append(out, Meeting{ID: m.ID, Properties: props})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Delete removes the meeting whose property name has value, as a person
// in HubSpot would.
func (a *Account) Delete(name, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.find(name, value); m != nil {
		delete(a.meetings, m.ID)
	}
}

// Edit sets properties on the meeting whose property name has value, as a
// person in HubSpot would.
func (a *Account) Edit(name, value string, props map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.find(name, value); m != nil {
		for k, v := range props {
			m.Properties[k] = v
		}
	}
}

func (a *Account) find(name, value string) *meeting {
	for _, m := range a.meetings {
		if value != "" && m.Properties[name] == value {
			return m
		}
	}
	return nil
}

// ServeHTTP routes the API.
func (a *Account) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := http.NewServeMux()
	m.HandleFunc("POST /crm/v3/properties/meetings/groups", a.api("groups.create", a.createGroup))
	m.HandleFunc("POST /crm/v3/properties/meetings", a.api("properties.create", a.createProperty))
	m.HandleFunc("POST /crm/v3/objects/meetings/batch/upsert", a.api("meetings.upsert", a.upsert))
	m.HandleFunc("GET /crm/v3/objects/meetings/{id}", a.api("meetings.get", a.get))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&a.Faults))
	m.ServeHTTP(w, r)
}

// api checks the token and the limits, then serves op.
func (a *Account) api(op string, h fakeserver.Handler) http.HandlerFunc {
	next := fakeserver.Serve(&a.Faults, &a.mu, nil, op, writeError, h)
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
