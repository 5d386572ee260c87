package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"

	"github.com/bookingsaga/bookingsaga/agency"
)

// hooks is an agency's webhook receiver: each delivery's type and the
// booking it names, as its backend would take them (answered 204).
type hooks struct {
	mu  sync.Mutex
	got []delivery
}

type delivery struct{ kind, bookingID string }

func (h *hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type string `json:"type"`
		Data struct {
			BookingID string `json:"booking_id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.got = append(h.got, delivery{kind: body.Type, bookingID: body.Data.BookingID})
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hooks) deliveries() []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]delivery(nil), h.got...)
}

// registerWebhooks has each agency's admin register its receiver through
// the API, which starts its dispatcher.
func (c *cluster) registerWebhooks(ctx context.Context) error {
	for _, a := range c.agencies {
		body, err := json.Marshal(map[string]string{"url": c.accountsOf(a).hooksURL})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.apiURLs(0)[0]+"/v1/webhooks/chaos", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.adminKeys[a])
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("register %s's webhook: %w", a, err)
		}
		_ = res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("register %s's webhook: %s", a, res.Status)
		}
	}
	return nil
}

// webhooksApart: every delivery an agency's receiver took names a
// booking of that agency, and an agency with a committed booking had at
// least one delivered.
func (ch *checker) webhooksApart() []string {
	byID := map[string]stored{}
	committed := map[string]bool{}
	for _, b := range ch.bookings {
		byID[b.id] = b
		committed[b.owner().ID] = committed[b.owner().ID] || b.committed
	}
	var bad []string
	for account, got := range ch.hooks {
		for _, d := range got {
			if b, ok := byID[d.bookingID]; ok && b.owner().ID != account {
				bad = append(bad, fmt.Sprintf("%s's webhook receiver got %s of %s, %s's booking", account, d.kind, b.key, b.owner().ID))
			}
		}
		if committed[account] && len(got) == 0 {
			bad = append(bad, fmt.Sprintf("%s's webhook receiver got nothing of its bookings", account))
		}
	}
	return bad
}

// hookCounts are each agency's deliveries taken.
func (ch *checker) hookCounts() map[string]int {
	out := map[string]int{}
	for a, got := range ch.hooks {
		out[a] = len(got)
	}
	return out
}

// agencyNumber is the number the callers' texts come from, and their
// replies go to.
const agencyNumber = "+33700000000"

// textReply is key's caller texting body to agency's account, which
// posts it to the API caller i uses. For STOP, the fake stops the number
// whatever the API answers (Twilio does not send a webhook twice), and a
// later send to it is refused with 21610, so the store learns of it
// either way; a reply the API does not understand it answers in TwiML,
// which the fake sends back.
func (c *cluster) textReply(agencyID string, i int, key, body string) {
	path := "/v1/tools/twilio/messages"
	if agencyID != agency.Default.ID {
		path = "/v1/agencies/" + agencyID + "/tools/twilio/messages"
	}
	_, _ = c.accountsOf(agencyID).sms.Reply(c.apiURLs(i)[0]+path, phoneFor(key), agencyNumber, body)
}

// linkOf is the path of the link to the page of key's caller, from the
// newest text to their number that carries one; "" when none came yet.
func (c *cluster) linkOf(agencyID, key string) string {
	sent := c.accountsOf(agencyID).sms.Sent()
	for i := len(sent) - 1; i >= 0; i-- {
		if sent[i].To == phoneFor(key) {
			if m := pageLink.FindStringSubmatch(sent[i].Body); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// pageLink is a caller's link in a text: its path is what the caller
// opens, at whichever API they reach.
var pageLink = regexp.MustCompile(`https?://[^/\s]+(/(?:a/[a-z0-9-]+/)?v/[A-Za-z0-9_-]{22})`)
