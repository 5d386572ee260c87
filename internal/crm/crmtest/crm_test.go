package crmtest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/crm/crmtest"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/retry"
)

func setupCRM(t *testing.T, token string) (*crmtest.CRM, *crm.HTTP) {
	t.Helper()
	fake := crmtest.NewCRM("secret")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	noWait := func(context.Context, time.Duration) error { return nil }
	c, err := crm.NewHTTP(crm.Config{BaseURL: srv.URL, Token: token, Timeout: 300 * time.Millisecond,
		Retry: retry.Policy{Attempts: 3, Base: time.Millisecond, Max: time.Second, Sleep: noWait}})
	require.NoError(t, err)
	return fake, c
}

func viewing() crm.Viewing {
	start := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	return crm.Viewing{BookingID: "b-1", RequestKey: "k-1", PropertyRef: "paris-11", AgentRef: "agent-00",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris", Status: crm.StatusScheduled}
}

func TestCRMUpsertSurvivesReplyLostAfterSave(t *testing.T) {
	t.Parallel()
	for _, fault := range []fakeserver.Fault{
		{Op: "viewings.upsert", Times: 1, DropAfterSave: true},
		{Op: "viewings.upsert", Times: 1, TimeoutAfterSave: true},
	} {
		fake, c := setupCRM(t, "secret")
		require.NoError(t, fake.Inject(fault))
		rec, err := c.Upsert(context.Background(), viewing(), 0)
		require.NoError(t, err)
		require.Equal(t, 1, rec.Version)
		require.Equal(t, 2, fake.Calls("viewings.upsert"))
		require.Equal(t, 1, fake.Writes(), "the retry was recognised by its Idempotency-Key")
		require.Equal(t, []crm.Record{rec}, fake.Records())
	}
}

func TestCRMCancelAndRescheduleAreNewWrites(t *testing.T) {
	t.Parallel()
	fake, c := setupCRM(t, "secret")
	ctx := context.Background()
	v := viewing()
	_, err := c.Upsert(ctx, v, 0)
	require.NoError(t, err)
	moved, err := c.Upsert(ctx, v.RescheduledTo("b-2"), 0)
	require.NoError(t, err)
	require.Equal(t, 2, moved.Version)
	require.Equal(t, crm.StatusRescheduled, moved.Status)
	got, err := c.Get(ctx, "b-1")
	require.NoError(t, err)
	require.Equal(t, "b-2", got.ReplacedBy)
	_, err = c.Get(ctx, "b-unknown")
	require.ErrorIs(t, err, crm.ErrNotFound)
	require.Equal(t, 2, fake.Writes())
}

func TestCRMRefusalsAreClassified(t *testing.T) {
	t.Parallel()
	_, wrongToken := setupCRM(t, "wrong")
	_, err := wrongToken.Upsert(context.Background(), viewing(), 0)
	require.True(t, crm.Permanent(err), "401 is not retried: %v", err)

	fake, c := setupCRM(t, "secret")
	require.NoError(t, fake.Inject(fakeserver.Fault{Op: "viewings.upsert", Times: 5, Status: http.StatusTooManyRequests, RetryAfter: 7 * time.Second}))
	_, err = c.Upsert(context.Background(), viewing(), 0)
	require.False(t, crm.Permanent(err))
	after, ok := retry.Transient(err)
	require.True(t, ok)
	require.Equal(t, 7*time.Second, after)
	require.Equal(t, 3, fake.Calls("viewings.upsert"))
	require.Zero(t, fake.Writes())
}

func TestRandomFaultsHitTheirShareOfCalls(t *testing.T) {
	t.Parallel()
	fake, c := setupCRM(t, "secret")
	ctx := context.Background()
	require.Error(t, fake.InjectRandom(1.5, []fakeserver.Fault{{Status: 503}}, 1), "a rate above 1")
	require.Error(t, fake.InjectRandom(0.5, nil, 1), "a rate without kinds")

	require.NoError(t, fake.InjectRandom(1, []fakeserver.Fault{{Status: http.StatusServiceUnavailable}}, 1))
	_, err := c.Upsert(ctx, viewing(), 0)
	require.Error(t, err)
	require.Equal(t, 3, fake.Calls("viewings.upsert"), "every attempt failed")
	require.Zero(t, fake.Writes())

	// A lost reply after the save still saves.
	require.NoError(t, fake.InjectRandom(1, []fakeserver.Fault{{DropAfterSave: true}}, 1))
	_, err = c.Upsert(ctx, viewing(), 0)
	require.Error(t, err)
	require.Equal(t, 1, fake.Writes())

	require.NoError(t, fake.InjectRandom(0, nil, 0))
	rec, err := c.Upsert(ctx, viewing(), 0)
	require.NoError(t, err)
	require.Equal(t, "b-1", rec.BookingID)
}

func TestTheCRMSurvivesACrashWithoutASave(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.json")
	fake, c := setupCRM(t, "secret")
	require.NoError(t, fake.Keep(path))
	ctx := context.Background()
	v := viewing()
	_, err := c.Upsert(ctx, v, 0)
	require.NoError(t, err)
	_, err = c.Upsert(ctx, v.RescheduledTo("b-2"), 0)
	require.NoError(t, err)
	before := fake.Records()

	again := crmtest.NewCRM("secret")
	require.NoError(t, again.Keep(path))
	require.ElementsMatch(t, before, again.Records())
	require.Equal(t, fake.Writes(), again.Writes())
}

// A state written again over a newer version is a new write; the same
// write retried is recognised as a retry.
func TestACorrectionOverANewerVersionIsANewWrite(t *testing.T) {
	t.Parallel()
	fake, c := setupCRM(t, "secret")
	ctx := context.Background()
	v := viewing()
	_, err := c.Upsert(ctx, v.Cancelled(), 0)
	require.NoError(t, err)
	stale, err := c.Upsert(ctx, v, 0)
	require.NoError(t, err)
	require.Equal(t, crm.StatusScheduled, stale.Status)

	replayed, err := c.Upsert(ctx, v.Cancelled(), 0)
	require.NoError(t, err)
	require.Equal(t, 1, replayed.Version, "the first write's answer, replayed")
	require.Equal(t, crm.StatusScheduled, fake.Records()[0].Status)

	corrected, err := c.Upsert(ctx, v.Cancelled(), stale.Version)
	require.NoError(t, err)
	require.Equal(t, crm.StatusCancelled, corrected.Status)
	require.Equal(t, 3, corrected.Version)
	again, err := c.Upsert(ctx, v.Cancelled(), stale.Version)
	require.NoError(t, err)
	require.Equal(t, corrected, again, "a retry of the correction")
	require.Equal(t, 3, fake.Writes())
}
