package callerpage

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// act is POST: a form of the page, cancel or move. The form must come
// from this site and carry the value tied to this link and the page it
// was served on; each action goes through the saga as the agent's calls
// do, and a done one answers the page anew (303), which shows the store's
// booking.
func (p *Page) act(w http.ResponseWriter, r *http.Request) error {
	action := r.PostFormValue("action")
	if action != "move" && action != "cancel" {
		action = "unknown"
	}
	v, ok, err := p.open(w, r, action)
	if !ok {
		return err
	}
	nonce := r.PostFormValue("nonce")
	if p.origin.Check(r) != nil || action == "unknown" || !checked(v.token, action, nonce, r.PostFormValue("check")) {
		return p.notice(w, r, v, action, "bad_form", http.StatusForbidden)
	}
	if action == "cancel" {
		rec, err := p.saga.Cancel(r.Context(), v.link.RequestKey)
		return p.answer(w, r, v, action, rec, err)
	}
	return p.move(w, r, v, nonce)
}

// move moves the booking to the slot the form chose, one of those the
// page offers now, under a request key of the form's own: the form sent
// twice is one move.
func (p *Page) move(w http.ResponseWriter, r *http.Request, v visit, nonce string) error {
	key := moveKey(v.token, nonce)
	if key == v.link.RequestKey { // sent again after it went through
		return p.done(w, r, "move", "confirmed")
	}
	start, err := time.Parse(time.RFC3339, r.PostFormValue("slot"))
	if err != nil {
		return p.render(w, r, v, "move", "not_offered", "not_offered", http.StatusBadRequest)
	}
	av, err := p.offered(r.Context(), v.booking)
	if err != nil {
		return p.answer(w, r, v, "move", receipt.Receipt{}, err)
	}
	if !offers(av, start) {
		return p.render(w, r, v, "move", "not_offered", "not_offered", http.StatusConflict)
	}
	body := edge.RescheduleBody{NewRequestKey: key, ExpectedPolicyVersion: av.PolicyVersion,
		Slot: edge.Slot{StartsAt: start.Format(time.RFC3339), ExpectedZoneRules: av.ZoneRules}}
	if err := edge.DefaultMove(r.Context(), p.set.Bookings, v.link.RequestKey, &body); err != nil {
		return p.answer(w, r, v, "move", receipt.Receipt{}, err)
	}
	req, e := edge.NewCommit(body.Slot, body.ExpectedPolicyVersion, nil, p.set.Now())
	if e != nil {
		return p.render(w, r, v, "move", "refused", "refused", http.StatusBadRequest)
	}
	rec, err := p.saga.Reschedule(r.Context(), v.link.RequestKey, key, req)
	return p.answer(w, r, v, "move", rec, err)
}

// answer words an action's receipt by its status alone: done, pending
// (it may have happened: never a failure), a time taken meanwhile with
// the times free now, or refused with nothing changed. An error leaves
// the outcome unknown, and the page (a page, never the API's JSON) says
// to look again.
func (p *Page) answer(w http.ResponseWriter, r *http.Request, v visit, action string, rec receipt.Receipt, err error) error {
	switch {
	case err != nil:
		edge.Logger(r.Context()).Warn("a caller's page action's outcome is not known", zap.String("action", action), zap.Error(err))
		return p.render(w, r, v, action, "unsure", "unsure", http.StatusServiceUnavailable)
	case rec.Status == receipt.StatusConfirmed, rec.Status == receipt.StatusCancelled:
		return p.done(w, r, action, string(rec.Status))
	case rec.Status == receipt.StatusPending:
		pending := v
		pending.change = rec.RequestKey
		return p.render(w, r, pending, action, "pending", "pending", http.StatusAccepted)
	case rec.Status == receipt.StatusConflict:
		return p.render(w, r, v, action, "conflict", "taken", http.StatusConflict)
	case rec.Reason != nil && rec.Reason.Retryable:
		return p.render(w, r, v, action, "retry", "unsure", http.StatusServiceUnavailable)
	}
	return p.render(w, r, v, action, "refused", "refused", http.StatusConflict)
}

// done sends the browser back to the page, which shows the booking as
// the store now holds it.
func (p *Page) done(w http.ResponseWriter, r *http.Request, action, result string) error {
	p.count(r, action, result)
	http.Redirect(w, r, r.URL.RequestURI(), http.StatusSeeOther)
	return nil
}

func offers(av booking.Availability, start time.Time) bool {
	for _, s := range av.Slots {
		if s.StartsAt.Equal(start) {
			return true
		}
	}
	return false
}

// newForm is a form of the page for action, with a fresh nonce and the
// check that ties it to the link.
func (p *Page) newForm(v visit, action string) *form {
	raw := make([]byte, 16)
	_, _ = rand.Read(raw) // crypto/rand never fails (Go 1.24)
	nonce := base64.RawURLEncoding.EncodeToString(raw)
	return &form{Heading: v.sp.Page(action, v.booking), Button: v.sp.Page(action+"_button", v.booking), Nonce: nonce,
		Check: formCheck(v.token, action, nonce)}
}

// formCheck ties a form to its link, its action and its page's nonce:
// a page elsewhere, which knows no token, cannot make one.
func formCheck(token, action, nonce string) string {
	sum := sha256.Sum256([]byte("bookingsaga page form\x00" + token + "\x00" + action + "\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func checked(token, action, nonce, check string) bool {
	return len(nonce) == 22 && subtle.ConstantTimeCompare([]byte(check), []byte(formCheck(token, action, nonce))) == 1
}

// moveKey is the request key of the move a form asks: the same for the
// same form sent again, and none a caller could choose, since it is a
// hash of their token.
func moveKey(token, nonce string) string {
	sum := sha256.Sum256([]byte("bookingsaga page move\x00" + token + "\x00" + nonce))
	return "page-" + hex.EncodeToString(sum[:16])
}
