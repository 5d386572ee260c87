// Package texts holds the route Twilio calls with the callers' replies
// to their texts (its incoming message webhook, application/x-www-form-
// urlencoded, signed with X-Twilio-Signature): STOP and Twilio's other
// opt-out words stop the agency's texts to that number, START and the
// opt-in words let them go again, and C (or CONFIRM, CONFIRMER, 确认)
// to a reminder records that the caller is coming. Every unsigned or
// mis-signed request is refused before anything is read or written.
package texts

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// Replies records what a number's reply says, on the agency's contacts
// and bookings of it; the store implements it. StopTexts records a STOP
// (stop) or START and reports how many contacts it found; Reconfirm
// marks the bookings a reminder was texted for as reconfirmed and names
// them; AnswerOnce says whether a reply not understood is answered, and
// about which booking (store.Store.AnswerOnce).
type Replies interface {
	StopTexts(ctx context.Context, number string, stop bool) (int, error)
	Reconfirm(ctx context.Context, number string) ([]string, error)
	AnswerOnce(ctx context.Context, number string) (booking.ReplyAnswer, bool, error)
	ReplyTaken(ctx context.Context, sid string) (bool, error)
	TakeReply(ctx context.Context, sid string) error
}

// Profiles reads the agency as its callers see it; the store implements
// it.
type Profiles interface {
	Profile(ctx context.Context) (booking.Profile, error)
}

// Config is the route's dependencies, which the wiring fills.
type Config struct {
	// Signed checks a request Twilio made to url, with its form params,
	// against signature under the auth token of the Twilio account of
	// the agency ctx acts for; false when the agency keeps none.
	Signed  func(ctx context.Context, url string, params map[string]string, signature string) (bool, error)
	Replies Replies
	// Profiles and PublicURL word the answer to a reply not understood:
	// the agency's name and number, and the link to the caller's page
	// under PublicURL (none when empty).
	Profiles  Profiles
	PublicURL string
}

// Texts serves Twilio's incoming message webhook.
type Texts struct {
	set edge.Settings
	cfg Config
}

// New serves the route with cfg; without cfg.Signed and cfg.Replies
// every call is refused.
func New(set edge.Settings, cfg Config) *Texts { return &Texts{set: set.WithDefaults(), cfg: cfg} }

// Routes are the deployment's Twilio account's webhook, the default
// agency's, and each agency's own account's.
func (t *Texts) Routes() []edge.Route {
	return []edge.Route{
		{Method: "POST", Path: "/v1/tools/twilio/messages", Handle: t.reply, Verify: t.verified},
		{Method: "POST", Path: "/v1/agencies/{agency}/tools/twilio/messages", Handle: t.reply, Verify: t.verified},
	}
}

// The words Twilio's default opt-out handling acts on, the whole
// message, in any case (docs: Advanced Opt-Out; errors 21610, 23002).
// Twilio answers each itself, and still forwards it here.
// The reminder's reply word is none of those: C, and its words in the
// three languages the texts speak.
// HELP and INFO Twilio answers itself too (with the help text the
// account sets), so they are not answered here again.
var (
	optOut    = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
	optIn     = []string{"START", "YES", "UNSTOP"}
	help      = []string{"HELP", "INFO"}
	reconfirm = []string{"C", "CONFIRM", "CONFIRMER", "确认"}
)

// word is what a reply asks: "stop", "start", "help", "reconfirm", or ""
// for anything else.
func word(body string) string {
	w := strings.ToUpper(strings.TrimSpace(body))
	for name, words := range map[string][]string{"stop": optOut, "start": optIn, "help": help, "reconfirm": reconfirm} {
		if slices.Contains(words, w) {
			return name
		}
	}
	return ""
}

// verified refuses a request without Twilio's signature over the URL it
// called and the form it sent, under the agency's account's token.
//
// It reads the form from body, the buffered copy, and leaves the
// request's own body to the handler: r here is a copy acting for the
// agency, which shares it.
func (t *Texts) verified(r *http.Request, body []byte) *edge.Error {
	sig := r.Header.Get("X-Twilio-Signature")
	if sig == "" || t.cfg.Signed == nil || t.cfg.Replies == nil {
		return unauthorized("missing X-Twilio-Signature")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return edge.BadRequest(booking.CodeBadJSON, "the body is not a form: %v", err)
	}
	params := make(map[string]string, len(form))
	for k := range form {
		params[k] = form.Get(k)
	}
	ok, err := t.cfg.Signed(r.Context(), calledURL(r), params, sig)
	switch {
	case err != nil:
		return &edge.Error{Status: http.StatusServiceUnavailable, Code: string(booking.CodeUnavailable), Retryable: true,
			Message: "the agency's Twilio account can't be read now"}
	case !ok && agency.From(r.Context()).IsDefault():
		return unauthorized("bad X-Twilio-Signature, or this deployment keeps no Twilio account")
	case !ok:
		return unauthorized("bad X-Twilio-Signature, or this agency set no Twilio account (PUT /v1/mirrors/twilio)")
	}
	return nil
}

// calledURL is the URL Twilio called, as the account's console names it:
// behind a proxy that ends TLS, X-Forwarded-Proto says https.
func calledURL(r *http.Request) string {
	scheme := "https"
	if r.TLS == nil && r.Header.Get("X-Forwarded-Proto") != "https" {
		scheme = "http"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// reply acts on a verified reply and answers Twilio in TwiML: empty for
// the words it knows (Twilio sends its own answer to the opt-out and
// opt-in words, and the reminder's reply word needs none), and for
// anything else, once a day per number, a message back saying what it
// reads and how to change the booking.
func (t *Texts) reply(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return edge.BadRequest(booking.CodeBadJSON, "the body is not a form: %v", err)
	}
	from, asked, sid := r.PostForm.Get("From"), word(r.PostForm.Get("Body")), r.PostForm.Get("MessageSid")
	if sid == "" {
		return edge.BadRequest(booking.CodeMissingField, "MessageSid is missing: Twilio names every message it posts")
	}
	taken, err := t.cfg.Replies.ReplyTaken(r.Context(), sid)
	if err != nil {
		return err
	}
	if taken { // posted again: it acted once already
		t.count(r.Context(), "replayed")
		return twiML(w, "")
	}
	result, err := t.act(r.Context(), from, asked)
	if err != nil {
		return err
	}
	answer := ""
	if result == "ignored" {
		if answer, err = t.answer(r.Context(), from); err != nil {
			return err
		}
		if answer != "" {
			result = "answered"
		}
	}
	if err := t.cfg.Replies.TakeReply(r.Context(), sid); err != nil {
		return err
	}
	t.count(r.Context(), result)
	return twiML(w, answer)
}

func (t *Texts) count(ctx context.Context, result string) {
	t.set.Metrics.Tagged(map[string]string{"agency": agency.From(ctx).Label(), "result": result}).Counter("text_replies_total").Inc(1)
}

// twiML answers Twilio: empty, or one message back to the caller.
func twiML(w http.ResponseWriter, message string) error {
	w.Header().Set("Content-Type", "text/xml")
	out := []byte(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	if message != "" {
		var esc bytes.Buffer
		if err := xml.EscapeText(&esc, []byte(message)); err != nil {
			return err
		}
		out = append(append(append(out, "<Message>"...), esc.Bytes()...), "</Message>"...)
	}
	_, err := w.Write(append(out, "</Response>"...))
	return err
}

// answer is the text that answers a reply not understood from number:
// what this number reads, and the link to the caller's page with the
// agency's number, in their language; "" when there is none to send
// (store.Store.AnswerOnce).
func (t *Texts) answer(ctx context.Context, from string) (string, error) {
	a, ok, err := t.cfg.Replies.AnswerOnce(ctx, from)
	if err != nil || !ok {
		return "", err
	}
	lang, err := speech.ParseLang(a.Lang)
	if err != nil {
		lang = speech.English
	}
	sp := speech.Speaker{Lang: lang}
	if t.set.Names != nil {
		sp.Names = t.set.Names.Lookup(ctx, lang, []string{a.Booking.Intent.PropertyID, a.Booking.Intent.AgentID})
	}
	if t.cfg.Profiles != nil {
		p, err := t.cfg.Profiles.Profile(ctx)
		if err != nil {
			return "", err
		}
		sp.Agency, sp.Phone = p.Name, p.Phone
	}
	if t.cfg.PublicURL != "" && a.Token != "" {
		sp.Link = agency.From(ctx).PageURL(t.cfg.PublicURL, a.Token, string(lang))
	}
	return sp.UnknownReply(a.Booking), nil
}

// act records what a reply asked, and names the result for the metric:
// what it did, "no_booking" when the number has nothing here it applies
// to (nothing written), "ignored" for any other reply.
func (t *Texts) act(ctx context.Context, from, asked string) (string, error) {
	n := 0
	switch asked {
	case "":
		return "ignored", nil
	case "help":
		return "help", nil // Twilio's own answer goes
	case "reconfirm":
		keys, err := t.cfg.Replies.Reconfirm(ctx, from)
		if err != nil {
			return "", err
		}
		n = len(keys)
	default:
		var err error
		if n, err = t.cfg.Replies.StopTexts(ctx, from, asked == "stop"); err != nil {
			return "", err
		}
	}
	if n == 0 {
		return "no_booking", nil
	}
	return asked, nil
}

func unauthorized(msg string) *edge.Error {
	return &edge.Error{Status: http.StatusUnauthorized, Code: string(booking.CodeUnauthorized), Message: msg}
}
