package hubspottest

import (
	"net/http"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// The account kept across a dev stack's restarts, as the other fakes
// keep theirs: a snapshot, and a journal of each API write since.

// state is what Save keeps.
type state struct {
	Seq     int                            `json:"seq"`
	Groups  map[string]map[string]bool     `json:"groups"`
	Props   map[string]map[string]property `json:"properties"`
	Objects map[string]map[string]*object  `json:"objects"`
	Assoc   map[string]map[string]bool     `json:"associations"`
	Merged  map[string]string              `json:"merged"`
	Journal int64                          `json:"journal"`
}

// change is one write as the journal logs it: what it left of the
// objects, groups and properties it touched.
type change struct {
	Seq      int       `json:"seq"`
	Kind     string    `json:"kind"`
	Group    string    `json:"group,omitempty"`
	Property *property `json:"property,omitempty"`
	Put      *object   `json:"put,omitempty"`
	Gone     string    `json:"gone,omitempty"`
	// Assoc is a meeting's contacts after the write.
	Assoc map[string]map[string]bool `json:"assoc,omitempty"`
}

func (a *Account) stage(ch change) {
	ch.Seq = a.seq
	a.journal.Stage(ch)
}

func (a *Account) apply(ch change) {
	a.seq = ch.Seq
	switch {
	case ch.Group != "":
		a.groups[ch.Kind][ch.Group] = true
	case ch.Property != nil:
		a.props[ch.Kind][ch.Property.Name] = *ch.Property
	case ch.Put != nil:
		a.objects[ch.Kind][ch.Put.ID] = ch.Put
	case ch.Gone != "":
		delete(a.objects[ch.Kind], ch.Gone)
	}
	for meeting, set := range ch.Assoc {
		a.assoc[meeting] = set
	}
}

// Save writes the account to path.
func (a *Account) Save(path string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.journal.Save(path, state{Seq: a.seq, Groups: a.groups, Props: a.props, Objects: a.objects,
		Assoc: a.assoc, Merged: a.merged, Journal: a.journal.Seq})
}

// Keep restores what Save and the journal kept at path (a missing file
// leaves it as it is), then logs each write through the API beside
// path, so a dev stack keeps it across a crash, not only a clean stop.
func (a *Account) Keep(path string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := state{Groups: a.groups, Props: a.props, Objects: a.objects, Assoc: a.assoc, Merged: a.merged}
	return fakeserver.Restore(&a.journal, path, "hubspot", &st, &st.Journal, func() {
		a.seq, a.groups, a.props, a.objects, a.assoc, a.merged = st.Seq, st.Groups, st.Props, st.Objects, st.Assoc, st.Merged
	}, a.apply)
}

// admin serves the fake's own reads, for the demo and the dev stack's
// tests: GET /_fake/meetings and /_fake/contacts.
func (a *Account) admin(m *http.ServeMux) {
	m.HandleFunc("GET /_fake/meetings", func(w http.ResponseWriter, _ *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, a.Meetings())
	})
	m.HandleFunc("GET /_fake/contacts", func(w http.ResponseWriter, _ *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, a.Contacts())
	})
}
