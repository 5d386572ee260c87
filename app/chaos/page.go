package chaos

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// page is a caller acting on their own page, from the link in their
// text, at the API they use now: it moves one of their bookings to a
// time the page offers, or cancels it, sending the same form again while
// the outcome is unknown (its nonce makes it one move). A caller with no
// link yet (no texts, or only bookings moved, whose texts go to the
// first's number) books anew instead.
func (c *caller) page(ctx context.Context) {
	i, path := -1, ""
	for _, j := range c.rng.Perm(len(c.mine)) {
		if c.link != nil {
			if path = c.link(c.mine[j]); path != "" {
				i = j
				break
			}
		}
	}
	if i < 0 {
		c.book(ctx, uuid.NewString(), c.cat.pick(c.rng))
		return
	}
	key := c.mine[i]
	op := "page-cancel"
	if c.rng.IntN(2) == 0 {
		op = "page-move"
	}
	web := &http.Client{Timeout: c.http.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form, outcome := c.pageForm(ctx, web, op, key, path)
	for attempt := 0; form != nil && attempt < 4; attempt++ {
		if outcome = c.sendForm(ctx, web, op, key, path, form); outcome != Unknown || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(200<<attempt) * time.Millisecond):
		}
	}
	if outcome == OK {
		c.mine = append(c.mine[:i], c.mine[i+1:]...) // a move's new key is the page's own
	}
}

// pageForm opens the page and fills the form op asks: nil when the page
// offers none (the booking changed, no time free, no answer), with the
// view's outcome. A view changes nothing, and is not in the history.
func (c *caller) pageForm(ctx context.Context, web *http.Client, op, key, path string) (url.Values, Outcome) {
	code, body, err := c.web(ctx, web, http.MethodGet, path, nil)
	outcome := pageOutcome(code, err)
	if code == 0 {
		c.at.Add(1)
	}
	action := strings.TrimPrefix(op, "page-")
	f := formOf.FindAllStringSubmatch(body, -1)
	for _, m := range f {
		if m[1] != action {
			continue
		}
		form := url.Values{"action": {action}, "nonce": {m[2]}, "check": {m[3]}}
		if action == "move" {
			slots := slotOf.FindAllStringSubmatch(body, -1)
			if len(slots) == 0 {
				return nil, outcome
			}
			form.Set("slot", slots[c.rng.IntN(len(slots))][1])
		}
		return form, outcome
	}
	return nil, outcome
}

// sendForm posts form and records the call: 303 (done) is ok; 202
// (pending), a 5xx and no answer unknown; anything else refused.
func (c *caller) sendForm(ctx context.Context, web *http.Client, op, key, path string, form url.Values) Outcome {
	start := time.Now()
	code, _, err := c.web(ctx, web, http.MethodPost, path, strings.NewReader(form.Encode()))
	outcome := pageOutcome(code, err)
	c.hist.add(Call{Client: c.id, Agency: c.agency, Op: op, Key: key, Start: start, End: time.Now(), HTTP: code,
		Retryable: code >= 500 || code == http.StatusTooManyRequests, Outcome: outcome, Err: errText(err)})
	if code == 0 {
		c.at.Add(1)
	}
	return outcome
}

// web is one request to a page at the API in use.
func (c *caller) web(ctx context.Context, web *http.Client, method, path string, body io.Reader) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.urls[int(c.at.Load())%len(c.urls)]+path, body)
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := web.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, string(raw), err
}

func pageOutcome(code int, err error) Outcome {
	switch {
	case err != nil || code == 0 || code >= 500 || code == http.StatusAccepted:
		return Unknown
	case code == http.StatusSeeOther || code == http.StatusOK:
		return OK
	}
	return Fail
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The page's forms and offered times, as it renders them.
var (
	formOf = regexp.MustCompile(`(?s)<form method="post" id="[a-z]+">.*?name="action" value="([a-z]+)">.*?name="nonce" value="([^"]+)">` +
		`<input type="hidden" name="check" value="([^"]+)">`)
	slotOf = regexp.MustCompile(`name="slot" value="([^"]+)"`)
)
