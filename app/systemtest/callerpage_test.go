package systemtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/api/callerpage"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/ratelimit"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// setupPages is a texting worker whose messages link the callers' pages
// on the API it serves, with the property's address, the agent's name
// and the agency's profile set.
func setupPages(t *testing.T) (f *fixture, fake *smstest.Twilio, api string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s, fake, fakeURL := fakeTwilioAt(t)
	f = sendingWorker(t, func(f *fixture) {
		f.acts.SMS, f.acts.PublicURL, f.publicLn = s, "http://"+ln.Addr().String(), ln
		f.mirrors.TwilioAccountSid, f.mirrors.TwilioAuthToken, f.mirrors.SMSFrom, f.mirrors.TwilioEndpoint =
			twilioAccount, twilioToken, agencyNumber, fakeURL
	})
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	api = f.serveAPI(app.EdgeConfig{})
	require.Equal(t, f.acts.PublicURL, api)
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "paris-11", Kind: "property", Capacity: 1,
		TimeZone: "Europe/Paris", CalendarID: "paris-11@calendar.test", DisplayName: "the Marais flat", Address: "12 rue des Rosiers"}))
	require.NoError(t, f.acts.Store.UpsertResource(f.ctx, booking.Resource{ID: "agent-00", Kind: "agent", Capacity: 1,
		TimeZone: "Europe/Paris", CalendarID: "agent-00@calendar.test", DisplayName: "Claire"}))
	require.Equal(t, http.StatusOK, f.call("PUT", api+"/v1/profile", map[string]string{"name": "Agence Lumière", "callback_phone": "+33140000000"}, nil))
	return f, fake, api
}

// linkIn is the link to the caller's page in a message's body.
var linkIn = regexp.MustCompile(`http://\S+/v/[A-Za-z0-9_-]{22}`)

// browser is headless Chromium (Debian's, as scripts/screenshot uses),
// for the test's time at most.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	require.NoError(t, err, "the callers' pages are tested in Chromium: install Debian's chromium (.ci/run does)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}

// status opens link and reads the page's status line.
func status(t *testing.T, ctx context.Context, link string) string {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link)))
	return text(t, ctx, "#status")
}

// text is the text of the element css selects.
func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	line, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	require.NoError(t, err)
	return line
}

// A caller opens the link in their text in a browser and moves the
// viewing to a time the page offers: the store holds the move, the old
// time released, and the text of the move carries the same time and the
// same link. The page then cancels it, and says so; the store and the
// next text agree. A link forged, or past its viewing, opens a page that
// says so, and changes nothing.
func TestACallerMovesAndCancelsThroughTheirPage(t *testing.T) {
	t.Parallel()
	f, fake, api := setupPages(t)
	key := uuid.NewString()
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, key, 10).Status)
	first := fake.Sent()[0].Body
	for _, want := range []string{"Agence Lumière: ", "the Marais flat (12 rue des Rosiers) with Claire", "To change or cancel it: " + api + "/v/"} {
		require.Contains(t, first, want)
	}
	link := linkIn.FindString(first)
	require.NotEmpty(t, link)

	ctx := browser(t)
	sp := speech.Speaker{Lang: speech.English}
	require.Contains(t, status(t, ctx, link), "is confirmed for "+sp.When(slot(t, 10), "Europe/Paris"))
	chosen, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#move input[name=slot]`), "value"))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#move input[name=slot]`)),
		chromedp.Click(chromedp.CSS(`#move button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#move input[value="`+chosen.Value+`"]`))))
	moved, err := time.Parse(time.RFC3339, chosen.Value)
	require.NoError(t, err)
	when := sp.When(moved, "Europe/Paris")
	require.Contains(t, text(t, ctx, "#status"), "is confirmed for "+when, "the page shows the store's booking after the move")

	token := strings.TrimPrefix(link, api+"/v/")
	l, err := f.acts.Store.FollowLink(f.ctx, token)
	require.NoError(t, err)
	now, err := f.acts.Store.Lookup(f.ctx, l.RequestKey)
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, now.Status)
	require.True(t, now.Intent.StartsAt.Equal(moved))
	old, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, booking.StatusReleasedForReschedule, old.Status, "booked new, then released old")
	require.Equal(t, booking.MessageSent, f.lastMessage(l.RequestKey, booking.MessageRescheduled).Status)
	second := fake.Sent()[1].Body
	require.Contains(t, second, "has moved to "+when)
	require.Contains(t, second, link, "the same link for the booking's moves")

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#cancel button`)), chromedp.WaitNotPresent(chromedp.CSS(`#cancel`))))
	require.Contains(t, text(t, ctx, "#status"), "on "+when+" is cancelled")
	now, err = f.acts.Store.Lookup(f.ctx, l.RequestKey)
	require.NoError(t, err)
	require.Equal(t, booking.StatusCancelled, now.Status)
	require.Equal(t, booking.MessageSent, f.lastMessage(l.RequestKey, booking.MessageCancelled).Status)
	require.Contains(t, fake.Sent()[2].Body, "on "+when+" is cancelled")

	forged := api + "/v/" + strings.Repeat("A", 22)
	require.Contains(t, status(t, ctx, forged), "This link opens nothing")
	_, err = f.pool.Exec(f.ctx, `UPDATE vault.caller_link SET expires_at = now() - interval '1 second'`) // the viewing's end passed
	require.NoError(t, err)
	require.Contains(t, status(t, ctx, link), "This link has expired")
	require.Contains(t, status(t, ctx, link+"?lang=fr"), "Ce lien a expiré")
	require.Len(t, fake.Sent(), 3, "no page changed anything")
}

// A form refused changes nothing: one without the check its page gave
// it, one sent from another site, a move to a time the page does not
// offer; each answers a page that says so. A second send of a form that
// went through is the same move.
func TestACallersPageRefusesFormsItDidNotOffer(t *testing.T) {
	t.Parallel()
	f, fake, api := setupPages(t)
	key := uuid.NewString()
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, key, 10).Status)
	link := linkIn.FindString(fake.Sent()[0].Body)
	page := f.page(link)
	nonce, check := field(t, page, "nonce"), field(t, page, "check")
	offered := field(t, page, "slot")

	post := func(form url.Values, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, link, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(body)
	}
	move := url.Values{"action": {"move"}, "slot": {offered}, "nonce": {nonce}, "check": {check}}
	without := url.Values{"action": {"move"}, "slot": {offered}, "nonce": {nonce}}
	code, body := post(without)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "This form has expired, and nothing changed")
	code, _ = post(move, "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, code, "a form sent from another site")
	notOffered := url.Values{"action": {"move"}, "slot": {slot(t, 10).Add(3 * time.Minute).Format(time.RFC3339)}, "nonce": {nonce}, "check": {check}}
	code, body = post(notOffered)
	require.Equal(t, http.StatusConflict, code)
	require.Contains(t, body, "That time is not one offered here")
	b, err := f.acts.Store.Lookup(f.ctx, key)
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, b.Status, "nothing changed")
	require.True(t, b.Intent.StartsAt.Equal(slot(t, 10)))

	code, _ = post(move)
	require.Equal(t, http.StatusOK, code, "moved, and the page again")
	code, _ = post(move)
	require.Equal(t, http.StatusOK, code, "the same form again: the same move")
	var moves int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT count(*) FROM booking WHERE replaces_request_key IS NOT NULL`).Scan(&moves))
	require.Equal(t, 1, moves)
}

// page is the HTML link answers.
func (f *fixture) page(link string) string {
	f.t.Helper()
	res, err := http.Get(link)
	require.NoError(f.t, err)
	defer res.Body.Close()
	require.Equal(f.t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(f.t, err)
	return string(body)
}

// field is the value of the first input named name in page.
func field(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindStringSubmatch(page)
	require.Len(t, m, 2, "the page has a %s", name)
	return m[1]
}

// A reply the service does not understand is answered, in TwiML, with
// what it reads, the link to the caller's page and the agency's number,
// once a day per number; a number with no booking here gets nothing.
func TestAReplyNotUnderstoodIsAnsweredOnceADay(t *testing.T) {
	t.Parallel()
	f, fake, api := setupPages(t)
	webhook := api + "/v1/tools/twilio/messages"
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, uuid.NewString(), 10).Status)
	link := linkIn.FindString(fake.Sent()[0].Body)

	code, err := fake.Reply(webhook, callerNumber, agencyNumber, "what time was it again?")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	sent := fake.Sent()
	require.Len(t, sent, 2)
	answer := sent[1]
	require.Equal(t, callerNumber, answer.To)
	for _, want := range []string{"Agence Lumière: ", "reads only C", link, "Or call us on +33140000000."} {
		require.Contains(t, answer.Body, want)
	}
	code, err = fake.Reply(webhook, callerNumber, agencyNumber, "hello?")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	code, err = fake.Reply(webhook, "+33699999999", agencyNumber, "hello?")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, fake.Sent(), 2, "once a day, and nothing to a number with no booking")
}

// Each link is limited (a dozen requests at once, then one every five
// seconds by default); past that its page says so, and asks the store
// nothing.
func TestACallersLinkIsLimited(t *testing.T) {
	t.Parallel()
	f, fake, api := setupPages(t)
	require.Equal(t, booking.MessageSent, f.textedBooking(f.ctx, api, apiKey, uuid.NewString(), 10).Status)
	// At a rate that refills no token within the test, however slow it runs.
	slow := f.serveAPI(app.EdgeConfig{Page: callerpage.Config{Links: f.acts.Store, Profiles: f.acts.Store,
		PerLink: ratelimit.Limits{PerSecond: 1e-6, Burst: 12}}})
	link := slow + strings.TrimPrefix(linkIn.FindString(fake.Sent()[0].Body), api)
	codes := map[int]int{}
	var last string
	for range 14 {
		res, err := http.Get(link)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		_ = res.Body.Close()
		codes[res.StatusCode]++
		last = string(body)
	}
	require.Equal(t, map[int]int{http.StatusOK: 12, http.StatusTooManyRequests: 2}, codes)
	require.Contains(t, last, "Too many tries with this link")
}
