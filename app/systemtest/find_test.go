package systemtest

import (
	"encoding/json"
	"fmt"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/bookingsaga/bookingsaga/api/voice"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/workflows"
)

var spokenReference = regexp.MustCompile(`BS-[A-Z0-9]{4}-[A-Z0-9]{4}`)

// retellTool calls one tool of call through Retell's function webhook.
func (f *fixture) retellTool(url, call, tool string, args map[string]any) string {
	f.t.Helper()
	body, err := json.Marshal(map[string]any{"name": tool, "call": map[string]string{"call_id": call}, "args": args})
	require.NoError(f.t, err)
	var out struct {
		Result string `json:"result"`
	}
	require.Equal(f.t, http.StatusOK, f.call("POST", url+"/v1/tools/retell", body, &out, "X-Retell-Signature", retellSign(body, "retell-key")))
	return out.Result
}

// A caller who booked in one call rings again: with the reference and
// the phone they gave, the new call finds the booking and may move it;
// with a wrong phone nothing is revealed, and guessing is cut short.
func TestAReturningCallerFindsTheirBookingByReferenceAndPhone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	core, logs := observer.New(zapcore.DebugLevel)
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Log: zap.New(core)}, Tools: voice.Config{RetellKey: "retell-key"}})
	args := bookArgs(t, 10)
	args["contact"] = map[string]string{"name": "Ada", "phone": "+33 6 12 34 56 78"}
	booked := f.retellTool(url, "call-"+uuid.NewString(), "book", args)
	require.True(t, strings.HasPrefix(booked, "[confirmed]"), booked)
	ref := spokenReference.FindString(booked)
	require.NotEmpty(t, ref)

	// A new call does not own it yet.
	later := "call-" + uuid.NewString()
	wrong := f.retellTool(url, later, "find_booking", map[string]any{"reference": ref, "phone": "06 12 34 56 79"})
	require.Equal(t, "[not_done: not_found] NOT done: no booking matches that reference and phone number; ask the caller to check both, or offer a person.", wrong)
	unknown := f.retellTool(url, later, "find_booking", map[string]any{"reference": receipt.Reference(uuid.NewString()), "phone": "06 12 34 56 78"})
	require.Equal(t, wrong, unknown, "a wrong phone and an unknown reference read the same")
	for _, near := range []string{"12 34 56 78", "+44 6 12 34 56 78"} { // the last digits alone; another country's
		miss := f.retellTool(url, later, "find_booking", map[string]any{"reference": ref, "phone": near})
		require.Equal(t, wrong, miss, "%s is not the number given", near)
	}

	found := f.retellTool(url, later, "find_booking", map[string]any{"reference": strings.ToLower(ref), "phone": "06 12 34 56 78"})
	require.True(t, strings.HasPrefix(found, "[confirmed]"), found)
	require.NotContains(t, found, "12 34", "the phone is never read back")
	key := toolKey.FindStringSubmatch(found)[1]
	moved := f.retellTool(url, later, "reschedule_booking", map[string]any{"request_key": key,
		"local_start": slot(t, 11).In(parisZone(t)).Format("2006-01-02T15:04")})
	require.True(t, strings.HasPrefix(moved, "[confirmed]"), moved)
	require.Equal(t, "released_for_reschedule", f.storeStatus(key))
	f.noPhoneInHistory(workflows.ConversationWorkflowID("retell/"+later), "612345678", "12 34 56")

	// Guessing: a third call spends its attempts on wrong numbers, and
	// then is refused even the right one.
	guesser := "call-" + uuid.NewString()
	for i := range 5 {
		line := f.retellTool(url, guesser, "find_booking", map[string]any{"reference": receipt.Reference(uuid.NewString()),
			"phone": "06 00 00 00 0" + string(rune('0'+i))})
		require.True(t, strings.HasPrefix(line, "[not_done: not_found]"), line)
	}
	limited := f.retellTool(url, guesser, "find_booking", map[string]any{"reference": ref, "phone": "06 12 34 56 78"})
	require.True(t, strings.HasPrefix(limited, "[not_done: rate_limited]"), limited)
	cancel := f.retellTool(url, guesser, "cancel_booking", map[string]any{"request_key": key})
	require.True(t, strings.HasPrefix(cancel, "[not_done: not_this_conversation]"), cancel)

	// Nothing about the contact reaches the API's logs either.
	require.NotZero(t, logs.Len(), "the API logged its calls")
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for _, fragment := range []string{"612345678", "12 34 56", "Ada"} {
			require.NotContains(t, line, fragment, "a log line holds the contact")
		}
	}
}

// A reference's find budget is one for every API process: behind a load
// balancer, attempts spread over two APIs (each from a new call, its
// reference written another way each time) still stop at five an hour.
func TestAReferencesFindBudgetIsSharedByEveryAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	apis := []string{f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}}), f.serveAPI(app.EdgeConfig{Tools: voice.Config{RetellKey: "retell-key"}})}
	ref := receipt.Reference(uuid.NewString())
	spellings := []string{ref, strings.ReplaceAll(ref, "-", ""), strings.ToLower(ref), "BS" + ref[3:], "BS-" + strings.Join(strings.Split(strings.ReplaceAll(ref[3:], "-", ""), ""), "-")}
	for i := range 5 {
		line := f.retellTool(apis[i%2], "call-"+uuid.NewString(), "find_booking", map[string]any{"reference": spellings[i], "phone": "06 00 00 00 01"})
		require.True(t, strings.HasPrefix(line, "[not_done: not_found]"), "attempt %d: %s", i+1, line)
	}
	for _, url := range apis {
		line := f.retellTool(url, "call-"+uuid.NewString(), "find_booking", map[string]any{"reference": ref, "phone": "06 00 00 00 01"})
		require.True(t, strings.HasPrefix(line, "[not_done: rate_limited]"), line)
	}
}

// noPhoneInHistory requires that no event of the workflow's history holds
// any of the phone's fragments.
func (f *fixture) noPhoneInHistory(workflowID string, fragments ...string) {
	f.t.Helper()
	it := f.client.GetWorkflowHistory(f.ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(f.t, err)
		raw, err := json.Marshal(ev)
		require.NoError(f.t, err)
		for _, frag := range fragments {
			require.NotContains(f.t, string(raw), frag)
		}
		n++
	}
	require.Positive(f.t, n)
}
