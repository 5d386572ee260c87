package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// writingTour is what callers are told in writing on the dev stack, as a
// voice agent books over MCP: one caller agreed to texts (in French), one
// to e-mail. Each booking is texted or e-mailed once, however often its
// book is re-sent; a move sends one "moved" text and one updated
// invitation (same UID, higher SEQUENCE); a cancel an e-mail, and no text
// to a caller who texted STOP, until she texts START.
func (d *devStack) writingTour() {
	d.t.Helper()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(d.t, err)
	at := func(days, hour int) string {
		day := time.Now().In(loc).AddDate(0, 0, days)
		return time.Date(day.Year(), day.Month(), day.Day(), hour, 0, 0, 0, loc).Format("2006-01-02T15:04")
	}
	book := func(call, lang, start string, contact map[string]any) string {
		args := map[string]any{"property_id": "paris-marais-12", "agent_id": "agent-claire", "time_zone": "Europe/Paris",
			"local_start": start, "duration_minutes": 30, "expected_policy_version": devstack.DemoPolicy, "language": lang, "contact": contact}
		first := d.tool(call, "book", args)
		require.Equal(d.t, "confirmed", first.Status, first.Line)
		for range 5 { // re-sent, as a platform resends a call that timed out
			again := d.tool(call, "book", args)
			require.Equal(d.t, first.RequestKey, again.RequestKey)
		}
		return first.RequestKey
	}
	// What the README's tour texted before is not this tour's.
	t0, m0 := len(d.texts()), len(d.mails())
	textCall, mailCall := "call-text-"+uuid.NewString()[:8], "call-mail-"+uuid.NewString()[:8]
	texted := book(textCall, "fr", at(8, 10), map[string]any{"name": "Camille", "phone": "+33612345678", "notify": "sms"})
	mailed := book(mailCall, "en", at(9, 11), map[string]any{"name": "Sam", "email": "sam@example.org", "notify": "email"})
	d.inWriting(t0+1, m0+1)
	texts := d.texts()[t0:]
	// Signed with the agency's name, the address, the agent, the link.
	require.True(d.t, strings.HasPrefix(texts[0].Body,
		"Agence Lumière : Votre visite de l'appartement du Marais (12 rue des Rosiers, 75004 Paris) avec Claire est confirmée pour le"), texts[0].Body)
	require.Contains(d.t, texts[0].Body, "10 h")
	require.Contains(d.t, texts[0].Body, receipt.Reference(texted))
	require.Contains(d.t, texts[0].Body, "Pour la modifier ou l'annuler : http://"+d.api+"/v/")
	d.pageShots(regexp.MustCompile(`http://\S+/v/[A-Za-z0-9_-]{22}`).FindString(texts[0].Body))

	texted = d.tool(textCall, "reschedule_booking", map[string]any{"request_key": texted, "local_start": at(8, 15)}).RequestKey
	mailed = d.tool(mailCall, "reschedule_booking", map[string]any{"request_key": mailed, "local_start": at(9, 15)}).RequestKey
	d.inWriting(t0+2, m0+2)
	require.Contains(d.t, d.texts()[t0+1].Body, "est déplacée au")
	// Camille texts STOP: the cancellation texts her nothing (the e-mail
	// goes); START, and her next booking's confirmation does.
	d.reply("+33612345678", "STOP")
	for _, key := range []struct{ call, key string }{{textCall, texted}, {mailCall, mailed}} {
		r := d.tool(key.call, "cancel_booking", map[string]any{"request_key": key.key})
		require.Equal(d.t, "cancelled", r.Status, r.Line)
	}
	d.inWriting(t0+2, m0+3)
	d.reply("+33612345678", "START")
	book("call-text-"+uuid.NewString()[:8], "fr", at(8, 16), map[string]any{"name": "Camille", "phone": "+33612345678", "notify": "sms"})
	d.inWriting(t0+3, m0+3)
	require.Contains(d.t, d.texts()[t0+2].Body, "est confirmée pour le", "after START")
	mails := d.mails()[m0:]
	var uid string
	for i, want := range []string{"METHOD:REQUEST", "METHOD:REQUEST", "METHOD:CANCEL"} {
		cal, ok := mails[i].Part("text/calendar")
		require.True(d.t, ok, mails[i].Subject)
		require.Contains(d.t, cal.Body, want)
		require.Contains(d.t, cal.Body, "\r\nSEQUENCE:"+string(rune('0'+i))+"\r\n")
		line := cal.Body[strings.Index(cal.Body, "UID:"):]
		line = line[:strings.Index(line, "\r\n")]
		if uid == "" {
			uid = line
		}
		require.Equal(d.t, uid, line, "one UID for the viewing")
	}
}

// pageShots photographs the caller's page link opens in each language,
// as scripts/screenshot does for docs/receipts.md (CALLER_PAGE_SHOTS names
// where to keep them; a temporary directory otherwise).
func (d *devStack) pageShots(link string) {
	d.t.Helper()
	require.NotEmpty(d.t, link, "the text links the caller's page")
	dir := os.Getenv("CALLER_PAGE_SHOTS")
	if dir == "" {
		dir = d.t.TempDir()
	}
	for _, lang := range []string{"en", "fr", "zh"} {
		out, err := filepath.Abs(filepath.Join(dir, "caller-page-"+lang+".png"))
		require.NoError(d.t, err)
		cmd := exec.Command("go", "run", ".", "-page", link+"?lang="+lang, "-out", out)
		cmd.Dir = "../../scripts/screenshot"
		msg, err := cmd.CombinedOutput()
		require.NoError(d.t, err, "%s", msg)
		b, err := os.ReadFile(out)
		require.NoError(d.t, err)
		require.True(d.t, bytes.HasPrefix(b, []byte("\x89PNG\r\n")), "%s is not a PNG", out)
	}
}

// inWriting waits until the fakes hold texts and mails messages, then
// requires that no more come.
func (d *devStack) inWriting(texts, mails int) {
	d.t.Helper()
	require.Eventually(d.t, func() bool { return len(d.texts()) >= texts && len(d.mails()) >= mails }, 30*time.Second, 100*time.Millisecond,
		"%d texts and %d e-mails", texts, mails)
	require.Len(d.t, d.texts(), texts, "one text per change")
	require.Len(d.t, d.mails(), mails, "one e-mail per change")
}

// reply is from texting body to the agency's number, through the fake
// Twilio's tour path: it posts it, signed, to the dev API's webhook.
func (d *devStack) reply(from, body string) {
	d.t.Helper()
	res, err := http.PostForm("http://"+d.sms+"/_fake/reply", url.Values{"webhook": {"http://" + d.api + "/v1/tools/twilio/messages"},
		"from": {from}, "to": {devstack.TwilioFrom}, "body": {body}})
	require.NoError(d.t, err)
	defer res.Body.Close()
	var out struct {
		Status int `json:"webhook_status"`
	}
	require.NoError(d.t, json.NewDecoder(res.Body).Decode(&out))
	require.Equal(d.t, http.StatusOK, out.Status, "the API took %s", body)
}

// tool calls a voice tool over MCP under the dev-agent key.
func (d *devStack) tool(call, name string, args map[string]any) voice.ToolResult {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := openMCP(d.t, ctx, "http://"+d.api, d.keys["dev-agent"], call).CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(d.t, err)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(d.t, err)
	var out voice.ToolResult
	require.NoError(d.t, json.Unmarshal(raw, &out))
	return out
}

func (d *devStack) texts() []smstest.Message {
	var out []smstest.Message
	d.list("http://"+d.sms+"/messages", &out)
	return out
}

func (d *devStack) mails() []mailtest.Message {
	var out []mailtest.Message
	d.list("http://"+d.mail+"/mail", &out)
	return out
}

func (d *devStack) list(url string, v any) {
	d.t.Helper()
	res, err := http.Get(url)
	require.NoError(d.t, err)
	defer res.Body.Close()
	require.Equal(d.t, http.StatusOK, res.StatusCode, url)
	require.NoError(d.t, json.NewDecoder(res.Body).Decode(v))
}
