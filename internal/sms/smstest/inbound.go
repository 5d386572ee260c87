package smstest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Twilio's default opt-out and opt-in words (Advanced Opt-Out): the
// whole message, in any case.
var (
	optOut = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
	optIn  = []string{"START", "YES", "UNSTOP"}
)

// Reply is from texting body to the account's number to, as Twilio
// takes it: an opt-out word stops the account's texts to from (its sends
// are refused with 21610), an opt-in word starts them again, and the
// message is posted to webhook as Twilio's incoming message webhook
// posts it (form-encoded, signed with X-Twilio-Signature under the
// account's auth token); a message the webhook answers in TwiML is sent
// back to from. It answers the webhook's status.
func (t *Twilio) Reply(webhook, from, to, body string) (int, error) {
	word := strings.ToUpper(strings.TrimSpace(body))
	t.mu.Lock()
	switch {
	case slices.Contains(optOut, word):
		if _, ok := t.stopped[from]; !ok {
			t.stopped[from] = time.Now()
		}
	case slices.Contains(optIn, word):
		delete(t.stopped, from)
	}
	t.mu.Unlock()
	form := url.Values{"MessageSid": {"SM" + newSid()}, "AccountSid": {t.accountSid}, "From": {from}, "To": {to}, "Body": {body},
		"NumMedia": {"0"}, "NumSegments": {"1"}, "SmsStatus": {"received"}, "ApiVersion": {"2010-04-01"}}
	req, err := http.NewRequest(http.MethodPost, webhook, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", Sign(t.authToken, webhook, form))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post reply: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.answer(res.Body, from, to)
	}
	return res.StatusCode, nil
}

// answer sends the messages of the webhook's TwiML answer back to the
// caller, as Twilio does with a Messaging response's <Message> verbs
// (to a number that opted out, none).
func (t *Twilio) answer(body io.Reader, caller, number string) {
	var twiml struct {
		Messages []string `xml:"Message"`
	}
	if xml.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&twiml) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range twiml.Messages {
		if t.stopped[caller].IsZero() {
			t.sent = append(t.sent, Message{Sid: "SM" + newSid(), To: caller, From: number, Body: m, At: time.Now().UTC()})
		}
	}
}

// Sign is Twilio's request signature, as its security page documents
// it: the full URL, then each POST parameter's name and value, sorted by
// name, with no delimiters; HMAC-SHA1 under the auth token; base64.
func Sign(authToken, fullURL string, form url.Values) string {
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range slices.Sorted(maps.Keys(form)) {
		b.WriteString(k)
		b.WriteString(form.Get(k))
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// newSid is the 32 hex digits of a message's sid after its prefix.
func newSid() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}
