package msgraph_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/msgraph"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

const (
	mailbox = "hugo@agency.example"
	tenant  = "5b3c2d4e-0000-4000-8000-000000000001"
	client  = "9a8b7c6d-0000-4000-8000-000000000002"
	secret  = "fake-client-secret"
)

type fixture struct {
	fake   *graphtest.Graph
	mirror *msgraph.Mirror
	url    string
	ctx    context.Context

	mu     sync.Mutex
	sleeps []time.Duration
}

// setup serves a fake tenant with one mailbox and points the real client
// at it with a client secret. Retry waits are recorded, not spent.
func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{fake: graphtest.NewGraph(graphtest.GraphApp{TenantID: tenant, ClientID: client, ClientSecret: secret}, mailbox),
		ctx: context.Background()}
	srv := httptest.NewServer(f.fake)
	t.Cleanup(func() { f.fake.Release(); srv.Close() })
	f.url = srv.URL
	f.mirror = f.client(t, msgraph.Config{ClientSecret: secret})
	return f
}

func (f *fixture) client(t *testing.T, cfg msgraph.Config) *msgraph.Mirror {
	t.Helper()
	cfg.Endpoint, cfg.Login, cfg.TenantID, cfg.ClientID = f.url+"/v1.0", f.url, tenant, client
	cfg.CallTimeout = 300 * time.Millisecond
	cfg.Retry = retry.Policy{Attempts: 4, Base: 100 * time.Millisecond, Max: 5 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.sleeps = append(f.sleeps, d)
			return nil
		}}
	m, err := msgraph.New(cfg)
	require.NoError(t, err)
	return m
}

// upserted is viewing(key), mirrored once: the arrangement most tests
// start from.
func (f *fixture) upserted(t *testing.T, key string) calendars.Booking {
	t.Helper()
	b := viewing(key)
	_, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	return b
}

func viewing(key string) calendars.Booking {
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	return calendars.Booking{Calendar: calendars.Ref{Provider: "microsoft", ID: mailbox}, BookingID: "b-" + key, RequestKey: key,
		PropertyRef: "paris-11", Reference: "BS-1234", StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}
}

func TestTheEventCarriesReferencesOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := viewing("refs")
	b.Attendees = []string{"claire@agency.example"}
	_, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	ev := f.fake.Events(mailbox)[0]
	require.True(t, ev.Start.Equal(b.StartsAt) && ev.End.Equal(b.EndsAt), "instants kept: %s–%s", ev.Start, ev.End)
	require.Equal(t, "Property viewing: paris-11", ev.Subject)
	require.Contains(t, ev.Body, "BS-1234")
	require.Contains(t, ev.Body, "Tue 8 Dec 2026 10:00 Europe/Paris", "the local time and zone, for people")
	require.Empty(t, ev.Attendees, "no address leaves the store unless invitations are turned on")
	require.Equal(t, "busy", ev.ShowAs)
	require.Len(t, ev.Properties, 2, "our marker: the request key and the booking id")
}

func TestAForeignEventIsReportedNotOverwritten(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := viewing("foreign")
	// A person copied one of our events: the marker came along, the
	// transactionId we create with did not.
	_, err := f.mirror.Upsert(f.ctx, viewing("original"))
	require.NoError(t, err)
	orig := f.fake.Events(mailbox)[0]
	copied := orig
	copied.ID, copied.TransactionID, copied.Subject = "", "", "Hand copy"
	copied.Properties = map[string]string{}
	for k, v := range orig.Properties {
		copied.Properties[k] = v
	}
	for k := range copied.Properties {
		if v := copied.Properties[k]; v == "original" {
			copied.Properties[k] = b.RequestKey
		}
	}
	copyID := f.fake.Put(mailbox, copied)
	before := f.fake.Events(mailbox)

	_, err = f.mirror.Upsert(f.ctx, b)
	var fe *calendars.ForeignEventError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, copyID, fe.EventID)
	require.True(t, calendars.Permanent(err), "no retry can make it ours")
	require.ErrorAs(t, f.mirror.Delete(f.ctx, mailbox, b.RequestKey, b.BookingID), &fe, "nor is it deleted")
	require.Equal(t, before, f.fake.Events(mailbox), "nothing was written")
	require.Zero(t, f.fake.Calls("events.update")+f.fake.Calls("events.delete"))

	// A hand-typed event in the slot, with no marker, is listed as not
	// ours (reconciliation flags it) and left alone by our writes.
	hand := f.fake.Put(mailbox, graphtest.GraphEvent{Subject: "Dentist", Start: b.StartsAt, End: b.EndsAt})
	_, err = f.mirror.Upsert(f.ctx, viewing("beside"))
	require.NoError(t, err)
	evs, err := f.mirror.Events(f.ctx, mailbox, b.StartsAt.Add(-time.Hour), b.EndsAt.Add(time.Hour))
	require.NoError(t, err)
	byID := map[string]calendars.Event{}
	for _, ev := range evs {
		byID[ev.ID] = ev
	}
	require.False(t, byID[hand].Ours)
	require.False(t, byID[copyID].Ours, "a copy carrying our marker is not ours either")
	require.True(t, byID[orig.ID].Ours)
	for _, ev := range f.fake.Events(mailbox) {
		if ev.ID == hand {
			require.Equal(t, "Dentist", ev.Subject, "untouched")
		}
	}
}

func TestAStaleETagIsReadAgain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.upserted(t, "stale")
	moved := b
	moved.StartsAt, moved.EndsAt = b.StartsAt.Add(time.Hour), b.EndsAt.Add(time.Hour)
	// Someone edits the event between our read and our update.
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.update", Times: 1, StaleETag: true}))
	got, err := f.mirror.Upsert(f.ctx, moved)
	require.NoError(t, err)
	require.True(t, got.Corrected)
	require.Equal(t, 2, f.fake.Calls("events.update"), "412, a fresh read, then the update")
	ev := f.fake.Events(mailbox)[0]
	require.True(t, ev.Start.Equal(moved.StartsAt))
	require.Equal(t, ev.ETag(), got.ETag)

	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.delete", Times: 1, StaleETag: true}))
	require.NoError(t, f.mirror.Delete(f.ctx, mailbox, b.RequestKey, b.BookingID))
	require.Empty(t, f.fake.Events(mailbox))
	require.Equal(t, 2, f.fake.Calls("events.delete"))
}

func TestThrottlingWaitsForRetryAfter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.create", Times: 1, Status: http.StatusTooManyRequests, RetryAfter: 3 * time.Second}))
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "getSchedule", Times: 1, Status: http.StatusServiceUnavailable, RetryAfter: 2 * time.Second}))
	b := f.upserted(t, "limited")
	_, err := f.mirror.FreeBusy(f.ctx, []string{mailbox}, b.StartsAt, b.EndsAt)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{3 * time.Second, 2 * time.Second}, f.sleeps)
	require.Len(t, f.fake.Events(mailbox), 1)

	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "events.list", Times: 10, Status: http.StatusTooManyRequests, RetryAfter: 9 * time.Second}))
	_, err = f.mirror.Upsert(f.ctx, viewing("exhausted"))
	require.Error(t, err)
	require.False(t, calendars.Permanent(err), "throttling outlasting the policy stays retryable")
	after, ok := retry.Transient(err)
	require.True(t, ok)
	require.Equal(t, 9*time.Second, after, "the activity retry can wait what Graph asked")
}

func TestAHandDeletedEventIsWrittenAgain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := viewing("deleted")
	first, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	f.fake.Remove(mailbox, first.EventID)
	got, err := f.mirror.Lookup(f.ctx, mailbox, b.RequestKey)
	require.NoError(t, err)
	require.Nil(t, got)
	again, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	require.NotEqual(t, first.EventID, again.EventID, "a new event: Graph assigns ids")
	got, err = f.mirror.Lookup(f.ctx, mailbox, b.RequestKey)
	require.NoError(t, err)
	require.True(t, got.Ours)
	require.Equal(t, again.EventID, got.ID)
	require.Equal(t, b.BookingID, got.BookingID)

	f.fake.Remove(mailbox, again.EventID) // and once more
	third, err := f.mirror.Upsert(f.ctx, b)
	require.NoError(t, err)
	require.NotContains(t, []string{first.EventID, again.EventID}, third.EventID)
	require.Len(t, f.fake.Events(mailbox), 1)
}

func TestFreeBusySeesHandTypedEvents(t *testing.T) {
	t.Parallel()
	f := setup(t)
	room := "room-2@agency.example"
	f.fake.AddMailbox(room)
	day := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	f.fake.Put(mailbox, graphtest.GraphEvent{Subject: "Private", Start: day.Add(10 * time.Hour), End: day.Add(11 * time.Hour)})
	f.fake.Put(mailbox, graphtest.GraphEvent{Subject: "Free", ShowAs: "free", Start: day.Add(12 * time.Hour), End: day.Add(13 * time.Hour)})
	f.fake.Put(room, graphtest.GraphEvent{Subject: "Away", ShowAs: "oof", Start: day.Add(15 * time.Hour), End: day.Add(16 * time.Hour)})
	busy, err := f.mirror.FreeBusy(f.ctx, []string{mailbox, room}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, map[string][]calendars.Interval{
		mailbox: {{Start: day.Add(10 * time.Hour), End: day.Add(11 * time.Hour)}},
		room:    {{Start: day.Add(15 * time.Hour), End: day.Add(16 * time.Hour)}},
	}, busy)

	busy, err = f.mirror.FreeBusy(f.ctx, []string{mailbox, "nobody@agency.example"}, day, day.Add(24*time.Hour))
	require.ErrorContains(t, err, "ErrorMailRecipientNotFound", "a mailbox that cannot be read is named, never read as free")
	require.Equal(t, map[string][]calendars.Interval{mailbox: {{Start: day.Add(10 * time.Hour), End: day.Add(11 * time.Hour)}}}, busy,
		"beside the mailboxes that could be read")
}

func TestEventsFollowsEveryPage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	day := time.Date(2026, 12, 9, 8, 0, 0, 0, time.UTC)
	for i := range 230 {
		f.fake.Put(mailbox, graphtest.GraphEvent{Subject: fmt.Sprint(i), Start: day.Add(time.Duration(i) * time.Minute), End: day.Add(time.Duration(i+1) * time.Minute)})
	}
	evs, err := f.mirror.Events(f.ctx, mailbox, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Len(t, evs, 230)
	require.Equal(t, 3, f.fake.Calls("calendarView"), "pages of 100")
}

func TestRefusalsAreFinal(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := viewing("refused")
	b.Calendar.ID = "nobody@agency.example"
	_, err := f.mirror.Upsert(f.ctx, b)
	require.ErrorContains(t, err, "ErrorInvalidUser")
	require.True(t, calendars.Permanent(err))

	tokens := f.fake.Calls("token")
	wrong := f.client(t, msgraph.Config{ClientSecret: "not-the-secret"})
	_, err = wrong.Upsert(f.ctx, viewing("wrong-secret"))
	require.ErrorContains(t, err, "invalid_client")
	require.True(t, calendars.Permanent(err), "a wrong secret needs an operator, not retries")
	require.Equal(t, tokens+1, f.fake.Calls("token"))
	require.Empty(t, f.fake.Events(mailbox))
}

func TestACertificateProvesTheApp(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bookingsaga"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	fake := graphtest.NewGraph(graphtest.GraphApp{TenantID: tenant, ClientID: client, Certificate: cert}, mailbox)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "app.pem")
	pemData := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})...)
	require.NoError(t, os.WriteFile(file, pemData, 0o600))
	f := &fixture{fake: fake, url: srv.URL, ctx: context.Background()}
	m := f.client(t, msgraph.Config{CertificateFile: file})
	_, err = m.Upsert(f.ctx, viewing("cert"))
	require.NoError(t, err)
	require.Len(t, fake.Events(mailbox), 1)
	_, err = m.Upsert(f.ctx, viewing("cert-2"))
	require.NoError(t, err)
	require.Equal(t, 1, fake.Calls("token"), "the token is reused until it expires")

	_, err = msgraph.New(msgraph.Config{TenantID: tenant, ClientID: client, CertificateFile: filepath.Join(t.TempDir(), "none.pem"), CallTimeout: time.Second})
	require.True(t, errors.Is(err, os.ErrNotExist), "a missing certificate stops start-up: %v", err)
	_, err = msgraph.New(msgraph.Config{TenantID: tenant, ClientID: client, CallTimeout: time.Second})
	require.ErrorContains(t, err, "exactly one of a client secret and a certificate file")
}

// TestABlackHoledLoginHoldsNoCallPastItsContext: with the login endpoint
// answering nothing, every call waiting for a token returns at its own
// deadline, however long the token request itself may take.
func TestABlackHoledLoginHoldsNoCallPastItsContext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.fake.Inject(fakeserver.Fault{Op: "token", Latency: time.Hour}))
	m, err := msgraph.New(msgraph.Config{Endpoint: f.url + "/v1.0", Login: f.url, TenantID: tenant, ClientID: client,
		ClientSecret: secret, CallTimeout: time.Hour, Retry: retry.Policy{Attempts: 1}})
	require.NoError(t, err)
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			ctx, cancel := context.WithTimeout(f.ctx, 200*time.Millisecond)
			defer cancel()
			_, err := m.FreeBusy(ctx, []string{mailbox}, time.Now(), time.Now().Add(time.Hour))
			errs <- err
		}()
	}
	guard := time.After(30 * time.Second) // the token request's own bound is an hour
	for range 5 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, context.DeadlineExceeded)
		case <-guard:
			t.Fatal("a call waited for a token past its context")
		}
	}
}
