// Package smstest is a fake of Twilio's Programmable Messaging API, the
// Message resource of API version 2010-04-01 as Twilio documents it
// (https://www.twilio.com/docs/messaging/api/message-resource): a
// form-encoded POST to /2010-04-01/Accounts/{AccountSid}/Messages.json
// under HTTP basic auth (the account SID and its auth token), answered
// 201 with the Message resource (an SM… sid, status "queued"), or with
// Twilio's error body ({"code", "message", "more_info", "status"}) and
// its codes: 20003 for bad credentials, 21211 for an invalid To number,
// 21602 for a missing Body, 21603 for a missing From, 21610 for a number
// that replied STOP, 20429 for too many requests. twilio-go talks to it
// unchanged. The list (GET, newest first, by To and From) answers
// "messages.list". Faults are injected by operation ("messages.create") as for
// every fake; GET /messages lists what was sent, for tests and the tour.
package smstest

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Message is one message the fake took, as it lists it.
type Message struct {
	Sid  string    `json:"sid"`
	To   string    `json:"to"`
	From string    `json:"from"`
	Body string    `json:"body"`
	At   time.Time `json:"date_created"`
}

// Twilio is the fake. Its zero value is not usable: see New.
type Twilio struct {
	// Faults are injected (Inject, InjectRandom, ClearFaults, Release,
	// Calls) on "messages.create".
	fakeserver.Faults
	accountSid, authToken string

	mu      sync.Mutex
	sent    []Message
	stopped map[string]time.Time // since when, by number
}

// New returns a fake account that takes accountSid and authToken.
func New(accountSid, authToken string) *Twilio {
	return &Twilio{accountSid: accountSid, authToken: authToken, stopped: map[string]time.Time{}}
}

// Stop makes number one that replied STOP: sending to it is refused with
// 21610, as Twilio refuses it.
func (t *Twilio) Stop(number string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped[number] = time.Now()
}

// StoppedAt is when number texted STOP, if it has not texted START since.
func (t *Twilio) StoppedAt(number string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.stopped[number]
	return at, ok
}

// Sent lists the messages taken, oldest first.
func (t *Twilio) Sent() []Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Message(nil), t.sent...)
}

// ServeHTTP routes the Messages resource and the fake's admin paths.
func (t *Twilio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := http.NewServeMux()
	m.HandleFunc("POST /2010-04-01/Accounts/{sid}/Messages.json", t.authed(fakeserver.Serve(&t.Faults, &t.mu, nil, "messages.create", writeError, t.create)))
	m.HandleFunc("GET /2010-04-01/Accounts/{sid}/Messages.json", t.authed(fakeserver.Serve(&t.Faults, &t.mu, nil, "messages.list", writeError, t.list)))
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&t.Faults))
	m.HandleFunc("GET /messages", func(w http.ResponseWriter, r *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, t.Sent())
	})
	// A caller's reply, for the tour: webhook, from, to and body, form-encoded.
	m.HandleFunc("POST /_fake/reply", func(w http.ResponseWriter, r *http.Request) {
		status, err := t.Reply(r.FormValue("webhook"), r.FormValue("from"), r.FormValue("to"), r.FormValue("body"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fakeserver.WriteJSON(w, http.StatusOK, map[string]int{"webhook_status": status})
	})
	m.ServeHTTP(w, r)
}

// authed checks the basic auth and that the path's account is its own.
func (t *Twilio) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != t.accountSid || subtle.ConstantTimeCompare([]byte(pass), []byte(t.authToken)) != 1 || r.PathValue("sid") != t.accountSid {
			writeError(w, http.StatusUnauthorized, "20003", "Authenticate")
			return
		}
		next(w, r)
	}
}

// e164 is what Twilio takes as a To number.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func (t *Twilio) create(r *http.Request) (int, any, error) {
	if err := r.ParseForm(); err != nil {
		return 0, nil, refuse(http.StatusBadRequest, 21602, err.Error())
	}
	to, from, body := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body")
	switch {
	case !e164.MatchString(to):
		return 0, nil, refuse(http.StatusBadRequest, 21211, fmt.Sprintf("The 'To' number %s is not a valid phone number.", to))
	case from == "" && r.PostForm.Get("MessagingServiceSid") == "":
		return 0, nil, refuse(http.StatusBadRequest, 21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.")
	case body == "":
		return 0, nil, refuse(http.StatusBadRequest, 21602, "Message body is required.")
	case !t.stopped[to].IsZero():
		return 0, nil, refuse(http.StatusBadRequest, 21610, "Attempt to send to unsubscribed recipient")
	}
	msg := Message{Sid: "SM" + newSid(), To: to, From: from, Body: body, At: time.Now().UTC()}
	t.sent = append(t.sent, msg)
	return http.StatusCreated, resource(t.accountSid, msg), nil
}

// list is the Messages list resource, newest first, filtered by To and
// From as Twilio filters it; the DateSent filters are not kept (a fake's
// texts are never "sent" by a carrier), and one page is all there is.
func (t *Twilio) list(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	size, err := strconv.Atoi(q.Get("PageSize"))
	if err != nil || size <= 0 || size > 1000 {
		size = 50
	}
	out := []map[string]any{}
	for i := len(t.sent) - 1; i >= 0 && len(out) < size; i-- {
		m := t.sent[i]
		if (q.Get("To") == "" || q.Get("To") == m.To) && (q.Get("From") == "" || q.Get("From") == m.From) {
			out = append(out, resource(t.accountSid, m))
		}
	}
	uri := r.URL.RequestURI()
	return http.StatusOK, map[string]any{"messages": out, "page": 0, "page_size": size, "start": 0, "end": max(len(out)-1, 0),
		"uri": uri, "first_page_uri": uri, "next_page_uri": nil, "previous_page_uri": nil}, nil
}

// resource is the Message resource as Twilio answers a create.
func resource(account string, m Message) map[string]any {
	date := m.At.Format(time.RFC1123Z)
	return map[string]any{
		"sid": m.Sid, "account_sid": account, "to": m.To, "from": m.From, "body": m.Body, "status": "queued",
		"num_segments": "1", "num_media": "0", "direction": "outbound-api", "api_version": "2010-04-01",
		"date_created": date, "date_updated": date, "date_sent": nil, "price": nil, "price_unit": "USD",
		"error_code": nil, "error_message": nil, "messaging_service_sid": nil,
		"uri": "/2010-04-01/Accounts/" + account + "/Messages/" + m.Sid + ".json",
	}
}

func refuse(status, code int, message string) error {
	return &fakeserver.APIError{Status: status, Code: strconv.Itoa(code), Message: message}
}

// writeError answers Twilio's error body. An injected failure carries an
// HTTP reason rather than a code: 429 is Twilio's 20429, a 5xx its 20500.
func writeError(w http.ResponseWriter, status int, reason, message string) {
	code, err := strconv.Atoi(reason)
	if err != nil {
		code = 20500
		if status == http.StatusTooManyRequests {
			code = 20429
		}
	}
	fakeserver.WriteJSON(w, status, map[string]any{"code": code, "message": message,
		"more_info": "https://www.twilio.com/docs/errors/" + strconv.Itoa(code), "status": status})
}
