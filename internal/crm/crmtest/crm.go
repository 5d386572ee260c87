package crmtest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// CRM is an in-memory CRM speaking the JSON API that crm.HTTP uses. Like
// Stripe-style APIs it remembers each Idempotency-Key with the body it came
// with: a repeat returns the first answer, a different body under the same
// key is refused with 422.
type CRM struct {
	// Faults are injected (Inject, InjectRandom, ClearFaults, Release,
	// Calls) by operation: viewings.upsert and viewings.get.
	fakeserver.Faults
	token string

	mu       sync.Mutex
	seq      int
	records  map[string]*crm.Record // booking id → record
	idem     map[string]idemEntry
	requests int // upserts that changed something
	journal  fakeserver.Journal
}

// crmChange is one upsert as the journal logs it: the record, its
// idempotency key's entry, and the counters after it.
type crmChange struct {
	BookingID string     `json:"booking_id"`
	Record    crm.Record `json:"record"`
	Key       string     `json:"key"`
	Idem      idemEntry  `json:"idem"`
	Seq       int        `json:"seq"`
	Writes    int        `json:"writes"`
}

type idemEntry struct {
	Body []byte     `json:"body"`
	Rec  crm.Record `json:"record"`
}

// NewCRM returns an empty fake CRM; a non-empty token is then required as a
// bearer token.
func NewCRM(token string) *CRM {
	return &CRM{token: token, records: map[string]*crm.Record{}, idem: map[string]idemEntry{}}
}

// Writes reports how many upserts were applied (idempotent replays excluded).
func (c *CRM) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Records returns every stored record, ordered by booking id.
func (c *CRM) Records() []crm.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]crm.Record, 0, len(c.records))
	for _, r := range c.records {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BookingID < out[j].BookingID })
	return out
}

// Delete removes a booking's record, as a person in the CRM would.
func (c *CRM) Delete(bookingID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.records, bookingID)
}

// crmState is what Save keeps.
type crmState struct {
	Seq     int                    `json:"seq"`
	Records map[string]*crm.Record `json:"records"`
	Idem    map[string]idemEntry   `json:"idempotency"`
	Writes  int                    `json:"writes"`
	Journal int64                  `json:"journal"`
}

// Save writes the records and idempotency keys to path.
func (c *CRM) Save(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.journal.Save(path, c.state())
}

func (c *CRM) state() crmState {
	return crmState{Seq: c.seq, Records: c.records, Idem: c.idem, Writes: c.requests, Journal: c.journal.Seq}
}

// Keep restores what Save and the journal kept at path (a missing file
// leaves it as it is), then logs each write through the API beside
// path, so a dev stack keeps it across a crash, not only a clean stop.
func (c *CRM) Keep(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := crmState{Records: map[string]*crm.Record{}, Idem: map[string]idemEntry{}}
	return fakeserver.Restore(&c.journal, path, "crm", &st, &st.Journal, func() {
		c.seq, c.records, c.idem, c.requests = st.Seq, st.Records, st.Idem, st.Writes
	}, func(ch crmChange) {
		rec := ch.Record
		c.records[ch.BookingID], c.idem[ch.Key] = &rec, ch.Idem
		c.seq, c.requests = ch.Seq, ch.Writes
	})
}

// ServeHTTP routes the CRM API and the fake's admin paths.
func (c *CRM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := http.NewServeMux()
	m.HandleFunc("PUT /v1/viewings/{id}", c.authed("viewings.upsert", c.upsert))
	m.HandleFunc("GET /v1/viewings/{id}", c.authed("viewings.get", c.get))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&c.Faults))
	m.HandleFunc("GET /_fake/viewings", func(w http.ResponseWriter, r *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, c.Records())
	})
	m.ServeHTTP(w, r)
}

// authed checks the bearer token, then serves op.
func (c *CRM) authed(op string, h fakeserver.Handler) http.HandlerFunc {
	next := fakeserver.Serve(&c.Faults, &c.mu, &c.journal, op, writeCRMError, h)
	return func(w http.ResponseWriter, r *http.Request) {
		if c.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+c.token)) != 1 {
			writeCRMError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			return
		}
		next(w, r)
	}
}

func writeCRMError(w http.ResponseWriter, status int, code, message string) {
	fakeserver.WriteJSON(w, status, map[string]string{"code": code, "message": message})
}

func (c *CRM) upsert(r *http.Request) (int, any, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return 0, nil, &fakeserver.APIError{Status: http.StatusBadRequest, Code: "idempotency_key_required", Message: "Idempotency-Key header is required"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return 0, nil, &fakeserver.APIError{Status: http.StatusBadRequest, Code: "bad_body", Message: err.Error()}
	}
	if prev, ok := c.idem[key]; ok {
		if !bytes.Equal(prev.Body, body) {
			return 0, nil, &fakeserver.APIError{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Message: "Idempotency-Key was used with another body"}
		}
		return http.StatusOK, prev.Rec, nil
	}
	var v crm.Viewing
	if err := json.Unmarshal(body, &v); err != nil {
		return 0, nil, &fakeserver.APIError{Status: http.StatusBadRequest, Code: "bad_json", Message: err.Error()}
	}
	if v.BookingID != r.PathValue("id") {
		return 0, nil, &fakeserver.APIError{Status: http.StatusBadRequest, Code: "id_mismatch", Message: "booking_id differs from the path"}
	}
	rec, ok := c.records[v.BookingID]
	if !ok {
		c.seq++
		rec = &crm.Record{ID: fmt.Sprintf("crm-%06d", c.seq)}
		c.records[v.BookingID] = rec
	}
	rec.Version++
	rec.Viewing = v
	c.requests++
	c.idem[key] = idemEntry{Body: body, Rec: *rec}
	c.journal.Stage(crmChange{BookingID: v.BookingID, Record: *rec, Key: key, Idem: c.idem[key],
		Seq: c.seq, Writes: c.requests})
	return http.StatusOK, *rec, nil
}

func (c *CRM) get(r *http.Request) (int, any, error) {
	rec, ok := c.records[r.PathValue("id")]
	if !ok {
		return 0, nil, &fakeserver.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no viewing for this booking"}
	}
	return http.StatusOK, *rec, nil
}
