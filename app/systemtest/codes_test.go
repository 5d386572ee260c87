package systemtest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// sixDigits is a one-time code in a text.
var sixDigits = regexp.MustCompile(`\b[0-9]{6}\b`)

// Marie rings from her own phone without her reference, wanting to move
// one of her two viewings: found by caller ID and her name, she asks for
// a code, which is texted once to the number the booking was made with.
// A wrong code unlocks nothing and spends a try; the right one unlocks the
// viewing it was asked for and no other, and only once (DH1). Each of
// these calls spends one of the call's five find attempts.
func TestACodeTextedToTheBookingsPhoneUnlocksThatBookingAlone(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	url, _ := f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")
	args := bookArgs(t, 14)
	args["contact"] = map[string]string{"name": "Marie Dupont", "phone": "06 12 34 56 78"}
	require.True(t, strings.HasPrefix(f.retellTool(url, "call-"+uuid.NewString(), "book", args), "[confirmed]"))
	var at10, at14 string
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT min(request_key) FILTER (WHERE extract(hour FROM starts_at AT TIME ZONE 'Europe/Paris') = 10),
min(request_key) FILTER (WHERE extract(hour FROM starts_at AT TIME ZONE 'Europe/Paris') = 14) FROM booking`).Scan(&at10, &at14))

	call := "vapi-" + uuid.NewString()
	tool := func(args map[string]any) string {
		return f.vapiLine(url, vapiPhoneCall(call, "+33612345678", "find_booking", args))
	}
	which := tool(map[string]any{"name": "Marie Dupont", "send_code": true})
	require.True(t, strings.HasPrefix(which, "[not_done: missing_field] NOT done: several viewings were found"), which)

	paris, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	local10 := slot(t, 10).In(paris).Format("2006-01-02T15:04")
	sent := tool(map[string]any{"name": "Marie Dupont", "send_code": true, "local_start": local10})
	require.True(t, strings.HasPrefix(sent, "[code_sent] A code was texted"), sent)
	again := tool(map[string]any{"name": "Marie Dupont", "send_code": true, "local_start": local10})
	require.True(t, strings.HasPrefix(again, "[code_sent] A code was already texted"), again)
	require.Equal(t, []booking.MessageRecord{{Kind: booking.MessageConfirmed, Status: booking.MessageNotConsented}, {Kind: booking.MessageCode, Status: booking.MessageSent, Channel: booking.ChannelSMS,
		ProviderID: f.eventuallySent(fake, 1)[0].Sid, Attempts: 1}}, f.messages(at10), "one code, sent once")
	text := fake.Sent()[0]
	require.Equal(t, "+33612345678", text.To)
	code := sixDigits.FindString(text.Body)
	require.NotEmpty(t, code, text.Body)

	wrong := tool(map[string]any{"code": wrongCode(code)})
	require.True(t, strings.HasPrefix(wrong, "[not_done: not_found]"), wrong)
	var tries int
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT tries FROM unlock_code`).Scan(&tries))
	require.Equal(t, 1, tries, "the wrong code spent a try")

	// Another call with the same code unlocks nothing: it was texted to this one.
	other := f.vapiLine(url, vapiPhoneCall("vapi-"+uuid.NewString(), "+33612345678", "find_booking", map[string]any{"code": code}))
	require.True(t, strings.HasPrefix(other, "[not_done: not_found]"), other)

	unlocked := tool(map[string]any{"code": strings.Join(strings.Split(code, ""), " ")})
	require.True(t, strings.HasPrefix(unlocked, "[confirmed]"), unlocked)
	require.Contains(t, unlocked, "request_key "+at10)
	line := func(name string, args map[string]any) string {
		return f.vapiLine(url, vapiPhoneCall(call, "+33612345678", name, args))
	}
	require.True(t, strings.HasPrefix(line("cancel_booking", map[string]any{"request_key": at14}), "[not_done: not_this_conversation]"),
		"the code unlocked the 10:00 viewing alone")
	require.Equal(t, receipt.StatusConfirmed, f.answer(url, at14).Status)
	require.True(t, strings.HasPrefix(line("cancel_booking", map[string]any{"request_key": at10}), "[cancelled]"))
	var used bool
	require.NoError(t, f.pool.QueryRow(f.ctx, `SELECT used_at IS NOT NULL FROM unlock_code`).Scan(&used))
	require.True(t, used, "a code is used once")
}

// Three wrong codes end a code: the right one after them unlocks nothing.
func TestACodeEndsAfterThreeTries(t *testing.T) {
	t.Parallel()
	f, fake := setupTexting(t)
	url, _ := f.bookedBy(t, 10, "Marie Dupont", "06 12 34 56 78")
	call := "vapi-" + uuid.NewString()
	tool := func(args map[string]any) string {
		return f.vapiLine(url, vapiPhoneCall(call, "+33612345678", "find_booking", args))
	}
	require.True(t, strings.HasPrefix(tool(map[string]any{"name": "Marie Dupont", "send_code": true}), "[code_sent]"))
	code := sixDigits.FindString(f.eventuallySent(fake, 1)[0].Body)
	for range 3 {
		require.True(t, strings.HasPrefix(tool(map[string]any{"code": wrongCode(code)}), "[not_done: not_found]"))
	}
	late := tool(map[string]any{"code": code})
	require.True(t, strings.HasPrefix(late, "[not_done: not_found]"), late)
}

// eventuallySent waits for n texts at the fake and returns them.
func (f *fixture) eventuallySent(fake *smstest.Twilio, n int) []smstest.Message {
	f.t.Helper()
	f.eventually(func() bool { return len(fake.Sent()) >= n }, "texted")
	return fake.Sent()
}

// wrongCode is a six-digit code other than code.
func wrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}
