// Package sms sends the caller's text messages through Twilio's
// Programmable Messaging API, with the official twilio-go client. Its
// fake, smstest, sits beside it.
package sms

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	twilio "github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

// Config is a Twilio account and the number (or messaging service) the
// messages come from.
type Config struct {
	AccountSid, AuthToken string
	// From is an E.164 number of the account, or a messaging service's
	// MG… sid.
	From string
	// Endpoint replaces https://api.twilio.com (the fake, a proxy); "" is
	// Twilio.
	Endpoint string
	// Timeout bounds one send: twilio-go takes no context, so the HTTP
	// client's timeout is what stops a call Twilio does not answer.
	Timeout time.Duration
}

var alnum = regexp.MustCompile(`^[0-9A-Za-z]+$`)

// Sender sends text messages through one Twilio account.
type Sender struct {
	api  *openapi.ApiService
	from string
	// signed checks inbound requests with the account's auth token.
	signed twilio.RequestValidator
}

// New builds a sender. twilio-go's requests go to api.twilio.com; an
// Endpoint is reached by rewriting each request's host, since the client
// keeps its base URL to itself.
func New(cfg Config) (*Sender, error) {
	if cfg.AccountSid == "" || cfg.AuthToken == "" || cfg.From == "" {
		return nil, errors.New("sms: the account sid, its auth token and a from number are required")
	}
	if !alnum.MatchString(cfg.AccountSid) || !alnum.MatchString(cfg.AuthToken) {
		// twilio-go would refuse each send with its own 21222 or 21224.
		return nil, errors.New("sms: the account sid and auth token are letters and digits only")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	var rt http.RoundTripper = http.DefaultTransport
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("sms: endpoint %q is not a URL", cfg.Endpoint)
		}
		rt = rebase{base: u, next: rt}
	}
	c := &twilio.Client{Credentials: twilio.NewCredentials(cfg.AccountSid, cfg.AuthToken),
		HTTPClient: &http.Client{Timeout: cfg.Timeout, Transport: rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.SetAccountSid(cfg.AccountSid)
	return &Sender{api: openapi.NewApiServiceWithClient(c), from: cfg.From, signed: twilio.NewRequestValidator(cfg.AuthToken)}, nil
}

// rebase sends every request to base's scheme and host.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.base.Scheme, r.base.Host, r.base.Host
	return r.next.RoundTrip(req)
}

// ErrUndeliverable means Twilio refused the number for good (invalid, not
// a mobile, unsubscribed with STOP, a region the account may not send
// to): sending again cannot help.
var ErrUndeliverable = errors.New("the number can't take this message")

// ErrOptedOut is the number's owner having texted STOP (Twilio's 21610,
// "Attempt to send to unsubscribed recipient"): nothing goes to it until
// they text START. It is ErrUndeliverable too.
var ErrOptedOut = fmt.Errorf("the number's owner texted STOP: %w", ErrUndeliverable)

// undeliverable are Twilio's codes for a number that will never take the
// message (https://www.twilio.com/docs/api/errors).
var undeliverable = map[int]bool{21211: true, 21214: true, 21217: true, 21408: true, 21610: true, 21612: true, 21614: true}

// Send sends body to the E.164 number to and returns the message's sid.
// A refused number is ErrUndeliverable; Twilio's 429 and 5xx, and a
// reply lost on the way, are other errors, for the caller to retry.
// Twilio's messages often quote the number, so only its code is kept.
func (s *Sender) Send(to, body string) (string, error) {
	m, err := s.api.CreateMessage((&openapi.CreateMessageParams{}).SetTo(to).SetFrom(s.from).SetBody(body))
	var te *twilio.TwilioRestError
	switch {
	case errors.As(err, &te) && te.Code == optedOut:
		return "", fmt.Errorf("send sms: twilio %d: %w", te.Code, ErrOptedOut)
	case errors.As(err, &te) && undeliverable[te.Code]:
		return "", fmt.Errorf("send sms: twilio %d: %w", te.Code, ErrUndeliverable)
	case errors.As(err, &te):
		return "", fmt.Errorf("send sms: twilio %d (http %d)", te.Code, te.Status)
	case err != nil:
		return "", fmt.Errorf("send sms: %w", err)
	case m.Sid == nil:
		return "", errors.New("send sms: twilio answered without a sid")
	}
	return *m.Sid, nil
}

// optedOut is Twilio's code for a number whose owner texted STOP.
const optedOut = 21610

// Signed reports whether an inbound request Twilio made to url (as the
// account's console names it, scheme to query) with form params carries
// X-Twilio-Signature's value signature under the account's auth token:
// twilio-go's validator, which tries url with and without its port.
func (s *Sender) Signed(url string, params map[string]string, signature string) bool {
	return s.signed.Validate(url, params, signature)
}

// Find looks among the last texts to to from this sender for one with
// body, created since since, and returns its sid. Twilio's list filters
// by day only (DateSent, and only once sent), so the recent page is read
// and compared here.
func (s *Sender) Find(to, body string, since time.Time) (string, bool, error) {
	params := (&openapi.ListMessageParams{}).SetTo(to).SetPageSize(50).SetLimit(50)
	if strings.HasPrefix(s.from, "+") { // a messaging service's texts come from its numbers
		params.SetFrom(s.from)
	}
	msgs, err := s.api.ListMessage(params)
	var te *twilio.TwilioRestError
	switch {
	case errors.As(err, &te):
		return "", false, fmt.Errorf("find sms: twilio %d (http %d)", te.Code, te.Status)
	case err != nil:
		return "", false, fmt.Errorf("find sms: %w", err)
	}
	for _, m := range msgs {
		if m.Sid == nil || m.Body == nil || !strings.Contains(*m.Body, body) {
			continue
		}
		if m.DateCreated != nil {
			if at, err := time.Parse(time.RFC1123Z, *m.DateCreated); err == nil && at.Before(since.Add(-time.Minute)) {
				continue // an older text of the same words: not this one's
			}
		}
		return *m.Sid, true, nil
	}
	return "", false, nil
}
