package systemtest

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/app"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Texts are bounded (DLM4): a number gets its day's texts and no more,
// a key's calls their hour's, and no text goes to a country the agency
// does not text (by default, the countries of its properties: here
// France). What was refused ends 'refused', with its reason, and counted.
func TestTextsAreCappedPerNumberPerKeyAndByCountry(t *testing.T) {
	t.Parallel()
	scope := tally.NewTestScope("", nil)
	s, fake := fakeTwilio(t)
	f := sendingWorker(t, func(f *fixture) {
		f.acts.SMS, f.acts.Metrics = s, scope
		f.acts.Texts = activities.TextLimits{PerNumberDay: 2, PerKeyHour: 3}
	})
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	url := f.serveAPI(app.EdgeConfig{})
	book := func(hour int, number string) string {
		key := uuid.NewString()
		body := bookingBody(key, slot(t, hour))
		body.Contact = &edge.Contact{Name: "Camille", Phone: number, Notify: "sms"}
		f.bookThroughAPI(url, body)
		f.eventually(func() bool {
			m := f.messages(key)
			return len(m) == 1 && m[0].Status != booking.MessageDue
		}, "the confirmation's text ended")
		return key
	}
	status := func(key string) booking.MessageRecord { return f.messages(key)[0] }

	require.Equal(t, booking.MessageSent, status(book(9, "+33612345678")).Status)
	require.Equal(t, booking.MessageSent, status(book(10, "+33612345678")).Status)
	capped := status(book(11, "+33612345678"))
	require.Equal(t, booking.MessageRefused, capped.Status, "the number's third text of the day")
	require.Contains(t, capped.LastError, "over a cap")
	require.Equal(t, booking.MessageSent, status(book(12, "+33698765432")).Status, "another number: the key's third of the hour")
	require.Equal(t, booking.MessageRefused, status(book(13, "+33611111111")).Status, "the key's fourth of the hour")

	abroad := status(book(14, "+18765550123")) // Jamaica: +1, not a country of the agency's properties
	require.Equal(t, booking.MessageRefused, abroad.Status)
	require.Contains(t, abroad.LastError, "region JM")
	require.Len(t, fake.Sent(), 3)

	refused := map[string]int64{}
	for _, c := range scope.Snapshot().Counters() {
		if c.Name() == "texts_refused_total" {
			refused[c.Tags()["reason"]] += c.Value()
		}
	}
	require.Equal(t, map[string]int64{"cap": 2, "country": 1}, refused)
}

// An agency's keys share its hour of texts: each key under its own cap,
// the agency's fourth text of the hour is refused, and another agency's
// texts go on.
func TestAnAgencysTextsAreCappedTogether(t *testing.T) {
	t.Parallel()
	s, fake, fakeURL := fakeTwilioAt(t)
	f := sendingWorker(t, func(f *fixture) {
		f.acts.SMS = s
		f.acts.Texts = activities.TextLimits{PerKeyHour: 2, PerAgencyHour: 3}
	})
	lyon := f.addAgency("lyon")
	// Lyon's own account, at the same fake: the caps are what is tried.
	f.setAccount(lyon, accounts.Twilio, map[string]string{"account_sid": twilioAccount, "auth_token": twilioToken,
		"from": "+33700000001", "endpoint": fakeURL})
	require.NoError(t, activities.EnsureMessages(f.ctx, f.client, f.queue))
	require.NoError(t, activities.EnsureMessages(lyon, f.client, f.queue))
	t.Cleanup(func() {
		_ = f.client.TerminateWorkflow(f.ctx, agency.Scoped(lyon, booking.MessagesIDPrefix+f.queue), "", "the test is over")
	})
	kr, secret := keysOf(t, apikey.Key{Name: "lyon-a", Scopes: []apikey.Scope{apikey.ScopeAgent}, Agency: "lyon"},
		apikey.Key{Name: "lyon-b", Scopes: []apikey.Scope{apikey.ScopeAgent}, Agency: "lyon"},
		apikey.Key{Name: "paris", Scopes: []apikey.Scope{apikey.ScopeAgent}})
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{Keys: kr}})
	book := func(ctx context.Context, by string, hour int, number string) booking.MessageRecord {
		key := uuid.NewString()
		body := bookingBody(key, slot(t, hour))
		body.Contact = &edge.Contact{Name: "Camille", Phone: number, Notify: "sms"}
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("POST", url+"/v1/bookings", body, &r, "Authorization", "Bearer "+secret[by]))
		require.Equal(t, receipt.StatusConfirmed, r.Status, "%s at %d: %+v", by, hour, r.Reason)
		var m booking.MessageRecord
		f.eventually(func() bool {
			msgs, err := f.acts.Store.Messages(ctx, key)
			require.NoError(t, err)
			if len(msgs) == 1 {
				m = msgs[0]
			}
			return m.Status != "" && m.Status != booking.MessageDue
		}, "the confirmation's text ended")
		return m
	}
	require.Equal(t, booking.MessageSent, book(lyon, "lyon-a", 9, "+33612345671").Status)
	require.Equal(t, booking.MessageSent, book(lyon, "lyon-a", 10, "+33612345672").Status)
	require.Equal(t, booking.MessageSent, book(lyon, "lyon-b", 11, "+33612345673").Status, "lyon's third of the hour")
	capped := book(lyon, "lyon-b", 12, "+33612345674")
	require.Equal(t, booking.MessageRefused, capped.Status, "lyon's fourth of the hour, lyon-b's second")
	require.Contains(t, capped.LastError, "of the agency an hour")
	// Both agencies' catalogues here name the same calendars, which
	// lyon's bookings now fill: the default agency books another hour.
	require.Equal(t, booking.MessageSent, book(f.ctx, "paris", 14, "+33612345675").Status, "the default agency's own hour")
	require.Len(t, fake.Sent(), 4)
}
