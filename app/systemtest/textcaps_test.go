package systemtest

import (
	"github.com/bookingsaga/bookingsaga/app"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
)

// Texts are bounded (DLM4): a number gets its day's texts and no more,
// a key's calls their hour's, and no text goes to a country the agency
// does not text (by default, the countries of its properties: here
// France). What was refused ends 'refused', with its reason, and counted.
func TestTextsAreCappedPerNumberPerKeyAndByCountry(t *testing.T) {
	t.Parallel()
	scope := tally.NewTestScope("", nil)
	fake := smstest.New(twilioAccount, twilioToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { fake.Release(); srv.Close() })
	s, err := sms.New(sms.Config{AccountSid: twilioAccount, AuthToken: twilioToken, From: "+33700000000", Endpoint: srv.URL})
	require.NoError(t, err)
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
