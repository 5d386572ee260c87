package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/receipt"
)

const (
	twilioAccount = "AC0123456789abcdef0123456789abcdef"
	twilioToken   = "0123456789abcdef0123456789abcdef"
	callerPhone   = "+33612345678"
)

// texting is setup with the activities texting through a fake Twilio.
func texting(t *testing.T) (*fixture, *smstest.Twilio) {
	t.Helper()
	f := setup(t)
	fake := smstest.New(twilioAccount, twilioToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { fake.Release(); srv.Close() })
	s, err := sms.New(sms.Config{AccountSid: twilioAccount, AuthToken: twilioToken, From: "+33700000000", Endpoint: srv.URL})
	require.NoError(t, err)
	// A property in UTC is in no country: the agency names France.
	f.acts.SMS, f.acts.Texts = s, activities.TextLimits{Countries: []string{"FR"}}
	require.NoError(t, f.acts.Store.UpsertResource(context.Background(), booking.Resource{ID: "prop", Kind: "property", Capacity: 1,
		TimeZone: "UTC", DisplayName: "the Marais flat", DisplayNames: map[string]string{"fr": "l'appartement du Marais"}}))
	return f, fake
}

// book commits key at hour with contact, sealed as the API seals it.
func (f *fixture) book(key string, hour int, c *booking.Contact) {
	f.t.Helper()
	ctx := context.Background()
	in := f.commitInput(key, "p1", hour)
	if c != nil {
		sealed, err := f.acts.Store.SealContact(ctx, key, *c, "Europe/Paris")
		require.NoError(f.t, err)
		in.Contact = sealed
	}
	_, err := f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: in.CommitRequest, CalendarUnchecked: true})
	require.NoError(f.t, err)
}

// send runs the sender once and returns how many it sent, or its error.
func (f *fixture) send() (int, error) {
	f.t.Helper()
	v, err := f.env.ExecuteActivity(f.acts.SendMessages, booking.MessagesInput{})
	if err != nil {
		return 0, err
	}
	var out booking.CountOutput
	require.NoError(f.t, v.Get(&out))
	return out.Count, nil
}

func (f *fixture) statuses(key string) []booking.MessageStatus {
	f.t.Helper()
	msgs, err := f.acts.Store.Messages(context.Background(), key)
	require.NoError(f.t, err)
	var out []booking.MessageStatus
	for _, m := range msgs {
		out = append(out, m.Status)
	}
	return out
}

func TestAConsentingCallerIsTextedOnceInTheirLanguage(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_sms", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS, Lang: "fr"})
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = f.send()
	require.NoError(t, err)
	require.Zero(t, n, "a message marked sent is not sent again")

	_, err = f.acts.Store.Release(context.Background(), store.ReleaseRequest{RequestKey: "req_sms"})
	require.NoError(t, err)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)

	sent := fake.Sent()
	require.Len(t, sent, 2)
	ref := receipt.Reference("req_sms")
	for i, word := range []string{"est confirmée pour le", "est annulée"} {
		require.Equal(t, callerPhone, sent[i].To)
		require.True(t, strings.HasPrefix(sent[i].Body, "Votre visite de l'appartement du Marais "), sent[i].Body)
		require.Contains(t, sent[i].Body, word)
		require.Contains(t, sent[i].Body, ref)
		require.Contains(t, sent[i].Body, "10 h", "the local time")
		require.NotContains(t, sent[i].Body, "req_sms", "no internal id")
	}
	require.Equal(t, []booking.MessageStatus{booking.MessageSent, booking.MessageSent}, f.statuses("req_sms"))
}

func TestWithoutConsentNothingIsTexted(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_none", 10, &booking.Contact{Phone: callerPhone})
	f.book("req_anon", 12, nil)
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, fake.Sent())
	require.Equal(t, []booking.MessageStatus{booking.MessageNotConsented}, f.statuses("req_none"), "a contact that agreed to nothing")
	require.Empty(t, f.statuses("req_anon"), "no contact: nobody to write to, no row")
}

// Inside the quiet hours, a confirmation the caller has just asked for
// goes at once; one made longer ago than that (queued late, or retried)
// waits for the morning, held, not dropped.
func TestAQuietNightHoldsWhatCanWait(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	now := time.Now().UTC()
	since := now.Sub(now.Truncate(24 * time.Hour))
	f.acts.Quiet = booking.QuietHours{From: (since + 23*time.Hour) % (24 * time.Hour), To: (since + time.Hour) % (24 * time.Hour)}
	f.book("req_night", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	f.book("req_late", 12, &booking.Contact{Phone: "+33612345679", Notify: booking.ChannelSMS})
	_, err := f.pool.Exec(context.Background(), "UPDATE caller_message SET created_at = created_at - $1::interval WHERE request_key = 'req_late'",
		(booking.JustAsked + time.Minute).String())
	require.NoError(t, err)
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n, "the confirmation just asked for, at once")
	require.Len(t, fake.Sent(), 1)
	require.Equal(t, []booking.MessageStatus{booking.MessageSent}, f.statuses("req_night"))
	require.Equal(t, []booking.MessageStatus{booking.MessageDue}, f.statuses("req_late"), "held to the quiet hours' end, not dropped")
	due, err := f.acts.Store.DueMessages(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, due, "not due before then")
}

func TestARefusedNumberEndsAndAFaultIsRetried(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	fake.Stop("+33699999999")
	f.book("req_stop", 10, &booking.Contact{Phone: "+33699999999", Notify: booking.ChannelSMS})
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n)
	msgs, err := f.acts.Store.Messages(context.Background(), "req_stop")
	require.NoError(t, err)
	require.Equal(t, booking.MessageRefused, msgs[0].Status, "Twilio's 21610 is the caller's STOP")
	require.Equal(t, "the caller texted STOP; a START from the number lets texts go again", msgs[0].LastError, "never the number")

	f.book("req_retry", 12, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, Status: http.StatusServiceUnavailable}))
	n, err = f.send()
	require.NoError(t, err, "the message backs off on its own; the run goes on")
	require.Zero(t, n)
	msgs, err = f.acts.Store.Messages(context.Background(), "req_retry")
	require.NoError(t, err)
	require.Equal(t, booking.MessageRecord{Kind: booking.MessageConfirmed, Status: booking.MessageDue, Attempts: 1,
		LastError: "send sms: twilio 20500 (http 503)"}, msgs[0])
	n, err = f.send()
	require.NoError(t, err)
	require.Zero(t, n, "not before its backoff")
	f.later(2 * time.Second)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, fake.Sent(), 1)
}

// A reply lost after Twilio took the message leaves the send unknown:
// Twilio takes no idempotency key, so the next try looks for the text
// before sending it, finds it, and marks it sent with its sid.
func TestALostReplyIsLookedUpNotSentAgain(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_lost", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, DropAfterSave: true}))
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n, "the reply was lost: not known to be sent")
	f.later(2 * time.Second)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	sent := fake.Sent()
	require.Len(t, sent, 1, "found at Twilio, not sent again")
	require.Equal(t, 1, fake.Calls("messages.list"))
	msgs, err := f.acts.Store.Messages(context.Background(), "req_lost")
	require.NoError(t, err)
	require.Equal(t, booking.MessageRecord{Kind: booking.MessageConfirmed, Status: booking.MessageSent, Channel: booking.ChannelSMS,
		ProviderID: sent[0].Sid, Attempts: 2}, msgs[0])
}

// The saga's timer asks for the reminder; the sender words it in the
// caller's language.
func TestTheReminderIsQueuedOnceAndWorded(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	ctx := context.Background()
	require.NoError(t, f.acts.Store.SetPolicy(ctx, booking.Policy{Version: "p2", SlotMinutes: 60, OpensAt: 6 * time.Hour,
		ClosesAt: 22 * time.Hour, HoldTTL: 10 * time.Minute, MinNotice: time.Hour, Reminder: 24 * time.Hour}))
	in := f.commitInput("req_rem", "p2", 10)
	sealed, err := f.acts.Store.SealContact(ctx, "req_rem", booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS, Lang: "zh"}, "Europe/Paris")
	require.NoError(t, err)
	in.Contact = sealed
	out, err := f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: in.CommitRequest, CalendarUnchecked: true})
	require.NoError(t, err)
	require.NotNil(t, out.Booking.RemindAt)
	for range 2 { // a retried activity
		v, err := f.env.ExecuteActivity(f.acts.QueueReminder, booking.ReminderInput{RequestKey: "req_rem", BookingID: out.Booking.BookingID})
		require.NoError(t, err)
		var got booking.ReminderOutput
		require.NoError(t, v.Get(&got))
		require.True(t, got.Queued)
	}
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 2, n, "the confirmation, then the reminder")
	sent := fake.Sent()
	require.Len(t, sent, 2)
	require.True(t, strings.HasPrefix(sent[1].Body, "提醒："), sent[1].Body)
	require.Contains(t, sent[1].Body, receipt.Reference("req_rem"))
	require.Equal(t, []booking.MessageStatus{booking.MessageSent, booking.MessageSent}, f.statuses("req_rem"))
}

// mailing is setup with the activities mailing through an SMTP sink.
func mailing(t *testing.T) (*fixture, *mailtest.Sink) {
	t.Helper()
	f := setup(t)
	sink := mailtest.New("", "")
	addr, err := sink.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Close() })
	m, err := mail.New(mail.Config{Addr: addr, From: "visites@agence.example", TLS: mail.TLSNone, Timeout: 5 * time.Second})
	require.NoError(t, err)
	f.acts.Mail = m
	return f, sink
}

// An e-mailed caller's own calendar follows the viewing: one invitation
// per change, one UID across the move, a sequence that grows, and a
// cancellation that removes it; quiet hours do not hold an e-mail.
func TestAnEmailedCallersCalendarFollowsTheViewing(t *testing.T) {
	t.Parallel()
	f, sink := mailing(t)
	ctx := context.Background()
	now := time.Now().UTC()
	since := now.Sub(now.Truncate(24 * time.Hour))
	f.acts.Quiet = booking.QuietHours{From: (since + 23*time.Hour) % (24 * time.Hour), To: (since + time.Hour) % (24 * time.Hour)}
	contact := booking.Contact{Email: "caller@example.org", Notify: booking.ChannelEmail, Lang: "fr"}
	sent := func() {
		t.Helper()
		n, err := f.send()
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	f.book("req_mail", 10, &contact)
	sent()
	moved := f.commitInput("req_mail_2", "p1", 14)
	moved.Intent.Replaces = "req_mail"
	sealed, err := f.acts.Store.SealContact(ctx, "req_mail_2", contact, "Europe/Paris")
	require.NoError(t, err)
	moved.Contact = sealed
	_, err = f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: moved.CommitRequest, CalendarUnchecked: true})
	require.NoError(t, err)
	sent()
	_, err = f.acts.Store.Release(ctx, store.ReleaseRequest{RequestKey: "req_mail_2"})
	require.NoError(t, err)
	sent()

	got := sink.Received()
	require.Len(t, got, 3)
	var uids []string
	for i, want := range []struct{ method, seq, subject string }{
		{"REQUEST", "SEQUENCE:0", "Visite confirmée : "}, {"REQUEST", "SEQUENCE:1", "Visite déplacée : "}, {"CANCEL", "SEQUENCE:2", "Visite annulée : "},
	} {
		m := got[i]
		require.Equal(t, []string{"caller@example.org"}, m.To)
		require.True(t, strings.HasPrefix(m.Subject, want.subject), m.Subject)
		cal, ok := m.Part("text/calendar")
		require.True(t, ok)
		require.Contains(t, cal.Type, "method="+want.method)
		require.Contains(t, cal.Body, "\r\n"+want.seq+"\r\n")
		require.NotContains(t, cal.Body, "req_mail", "no internal id")
		uid := cal.Body[strings.Index(cal.Body, "UID:"):]
		uids = append(uids, uid[:strings.Index(uid, "\r\n")])
	}
	require.Equal(t, uids[0], uids[1], "one UID across the move")
	require.Equal(t, uids[0], uids[2])
	require.Equal(t, []booking.MessageStatus{booking.MessageSent}, f.statuses("req_mail"))
	msgs, err := f.acts.Store.Messages(ctx, "req_mail_2")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Equal(t, booking.ChannelEmail, msgs[0].Channel)
	require.Equal(t, got[1].MessageID, msgs[0].ProviderID)
}

// The sender yields to commits once per batch of due messages, not once
// per message: the yields of a backlog sent one by one would add up past
// the activity's StartToClose, and a send cut short there may go twice.
func TestTheSenderYieldsToCommitsOncePerBatch(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	for i, key := range []string{"req_a", "req_b", "req_c"} {
		f.book(key, 10+2*i, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	}
	scope := tally.NewTestScope("", nil)
	f.acts.Metrics, f.acts.MirrorYield = scope, time.Millisecond
	defer activities.HoldCommits(f.acts)() // every wait runs out its budget

	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Len(t, fake.Sent(), 3)
	waits := scope.Snapshot().Timers()["mirror_yield+ended=budget"]
	require.NotNil(t, waits, "the sender yielded")
	require.Len(t, waits.Values(), 1, "one batch, one yield")
}

// Temporal runs a second attempt of the sender when the first outlives
// its heartbeat or start-to-close timeout while it is still sending (a
// slow Twilio): the message is the first's until it ends, so the two
// attempts text the caller once (DLM1).
func TestTwoSendersAtOnceTextOncePerChange(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_slow", 10, &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS, Lang: "fr"})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, Latency: 3 * time.Second}))

	var suite testsuite.WorkflowTestSuite
	first := suite.NewTestActivityEnvironment()
	first.RegisterActivity(f.acts)
	sent := make(chan error, 1)
	go func() {
		_, err := first.ExecuteActivity(f.acts.SendMessages, booking.MessagesInput{})
		sent <- err
	}()
	require.Eventually(t, func() bool { return fake.Calls("messages.create") == 1 }, 10*time.Second, time.Millisecond, "the first is sending")
	n, err := f.send() // the second attempt, while the first waits on Twilio
	require.NoError(t, err)
	require.Zero(t, n, "the message is the first attempt's")
	require.NoError(t, <-sent)
	require.Len(t, fake.Sent(), 1, "one text")
	require.Equal(t, []booking.MessageStatus{booking.MessageSent}, f.statuses("req_slow"))
}

// pendingRefused commits in for a caller told it was pending (the call
// noted so), where the store refuses it for a conflict.
func (f *fixture) pendingRefused(in booking.CommitInput, c *booking.Contact) {
	f.t.Helper()
	ctx := context.Background()
	if c != nil {
		sealed, err := f.acts.Store.SealContact(ctx, in.RequestKey, *c, "Europe/Paris")
		require.NoError(f.t, err)
		in.Contact = sealed
	}
	op := booking.PendingCommit
	if in.Intent.Replaces != "" {
		op = booking.PendingReschedule
	}
	require.NoError(f.t, f.acts.Store.NotePending(ctx, booking.PendingCall{Op: op, RequestKey: in.RequestKey, Replaces: in.Intent.Replaces,
		Request: &in.CommitRequest}))
	out, err := f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: in.CommitRequest, CalendarUnchecked: true})
	require.NoError(f.t, err)
	require.NotNil(f.t, out.Conflict)
}

// A caller told "pending" hears how it settled when the store refused
// it: not booked after all, with other free times; a move refused, that
// the old time stands. Nothing is said of a refusal the call answered.
func TestAPendingBookingRefusedIsTextedAsNotBooked(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_holder", 10, nil)
	caller := &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS}
	f.pendingRefused(f.commitInput("req_pending", "p1", 10), caller)
	n, err := f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	body := fake.Sent()[0].Body
	require.Contains(t, body, "Sorry: your viewing of the Marais flat on "+speech.Speaker{Lang: speech.English}.When(f.day.Add(10*time.Hour), "UTC")+
		" could not be booked after all, and nothing is booked. Reference "+receipt.Reference("req_pending"))
	require.Contains(t, body, "Free instead: ")
	require.Equal(t, []booking.MessageStatus{booking.MessageSent}, f.statuses("req_pending"))

	f.book("req_mine", 12, caller)
	move := f.commitInput("req_move", "p1", 10)
	move.Intent.Replaces = "req_mine"
	f.pendingRefused(move, nil)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 2, n, "the confirmation of req_mine, then the move refused")
	require.Contains(t, fake.Sent()[2].Body, "could not be moved to")
	require.Contains(t, fake.Sent()[2].Body, "it stays as it was")
}

// A not-booked text whose reply was lost is found at Twilio on the next
// try, though the free times it offers changed meanwhile: it is looked
// up by the words that do not change, and not sent twice.
func TestALostNotBookedTextIsFoundThoughItsFreeTimesChanged(t *testing.T) {
	t.Parallel()
	f, fake := texting(t)
	f.book("req_holder", 10, nil)
	f.pendingRefused(f.commitInput("req_pending", "p1", 10), &booking.Contact{Phone: callerPhone, Notify: booking.ChannelSMS})
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "messages.create", Times: 1, DropAfterSave: true}))
	n, err := f.send()
	require.NoError(t, err)
	require.Zero(t, n, "the reply was lost")
	first := fake.Sent()[0].Body
	// The first time it offered is taken now.
	ctx := context.Background()
	av, err := f.acts.Store.Availability(ctx, booking.AvailabilityQuery{PropertyID: "prop", AgentID: "agent-00",
		From: time.Now(), To: time.Now().Add(7 * 24 * time.Hour), Duration: time.Hour})
	require.NoError(t, err)
	require.NotEmpty(t, av.Slots)
	taken := f.commitInput("req_taken", "p1", 0)
	taken.Intent.StartsAt, taken.Intent.EndsAt = av.Slots[0].StartsAt, av.Slots[0].StartsAt.Add(time.Hour)
	_, err = f.acts.Store.Commit(ctx, store.CommitRequest{CommitRequest: taken.CommitRequest, CalendarUnchecked: true})
	require.NoError(t, err)
	f.later(2 * time.Second)
	n, err = f.send()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, fake.Sent(), 1, "found at Twilio, not sent again")
	require.Contains(t, first, "Free instead: ")
}
