package store

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/pgtest"
)

// roles grants the three logins a split deployment has (pgtest makes
// them) their rights in this test's database, as schema.Migrate does, and
// returns the owner's pool and a pool for each.
func roles(t *testing.T) (owner *pgxpool.Pool, as func(role string) *pgxpool.Pool) {
	t.Helper()
	owner, url := pgtest.NewWithURL(t)
	ctx := t.Context()
	_, err := owner.Exec(ctx, "SELECT bookingsaga_grant_roles()")
	require.NoError(t, err)
	return owner, func(role string) *pgxpool.Pool {
		cfg, err := pgxpool.ParseConfig(url)
		require.NoError(t, err)
		cfg.ConnConfig.User = role
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
}

// rewrite tries to change the event log as retention says it may.
func rewrite(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL bookingsaga.retention = 'on'; SET LOCAL bookingsaga.agency = '1'"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE booking_event SET detail = '{}'")
		return err
	})
}

// TestOnlyTheRetentionRoleRelaxesTheEventLogsGuard: the worker's and the
// API's roles book, read and seal, but neither can rewrite the
// event log (the setting alone no longer opens it), change the schema or
// switch the guard off; the API's deletes no booking; the retention
// role's retention runs.
func TestOnlyTheRetentionRoleRelaxesTheEventLogsGuard(t *testing.T) {
	t.Parallel()
	admin, as := roles(t)
	ctx := t.Context()
	clock := &clock{t: testNow}
	setupStore := New(admin, Config{Now: clock.Now})
	require.NoError(t, setupStore.SetPolicy(ctx, testPolicy))
	for _, r := range []booking.Resource{{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"},
		{ID: agent(0), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}} {
		require.NoError(t, setupStore.UpsertResource(ctx, r))
	}

	worker := New(as("bookingsaga_worker"), Config{Now: clock.Now})
	_, err := worker.Commit(ctx, commitReq("req_role", intent("paris", agent(0), "10:00", "10:30")))
	require.NoError(t, err, "the worker books")
	api := New(as("bookingsaga_api"), Config{Now: clock.Now})
	sealed, err := api.SealContact(ctx, "req_role_2", booking.Contact{Name: "Ada"}, "Europe/Paris")
	require.NoError(t, err, "the API seals contacts")
	require.NotNil(t, sealed)

	for role, refusal := range map[string]string{"bookingsaga_worker": "append-only", "bookingsaga_api": "permission denied"} {
		pool := as(role)
		require.ErrorContains(t, rewrite(ctx, pool), refusal, role)
		_, err := pool.Exec(ctx, "ALTER TABLE booking_event DISABLE TRIGGER booking_event_append_only")
		require.ErrorContains(t, err, "must be owner", role)
	}
	_, err = as("bookingsaga_api").Exec(ctx, "DELETE FROM booking")
	require.ErrorContains(t, err, "permission denied", "the API deletes no booking")

	require.NoError(t, rewrite(ctx, as("bookingsaga_retention")), "the retention role may")
	clock.Advance(3 * 365 * 24 * time.Hour)
	n, err := New(as("bookingsaga_retention"), Config{Now: clock.Now}).ApplyRetention(ctx, 10)
	require.NoError(t, err)
	require.Positive(t, n, "retention anonymised the old booking")
}

// TestTheAPIsRoleWritesOnlyWhatItsRoutesChange: as bookingsaga_api, every
// write the API's routes make works (the catalogue, contacts and their
// erasure, webhook endpoints and their secrets, hand-offs, pending marks,
// find attempts), and nothing else: no event or delivery inserted, no
// booking changed, no webhook key read.
func TestTheAPIsRoleWritesOnlyWhatItsRoutesChange(t *testing.T) {
	t.Parallel()
	admin, as := roles(t)
	ctx, clock := t.Context(), &clock{t: testNow}
	require.NoError(t, New(admin, Config{}).SetPolicy(ctx, testPolicy))
	require.NoError(t, New(admin, Config{}).UpsertResource(ctx, booking.Resource{ID: agent(0), Kind: "agent", Capacity: 1, TimeZone: "Europe/Paris"}))
	pool := as("bookingsaga_api")
	api := New(pool, Config{Now: clock.Now})

	require.NoError(t, api.UpsertResource(ctx, booking.Resource{ID: "paris", Kind: "property", Capacity: 1, TimeZone: "Europe/Paris"}), "PUT /v1/resources")
	p := testPolicy
	p.Version = "by-the-api"
	require.NoError(t, api.SetPolicy(ctx, p), "PUT /v1/policy")
	require.NoError(t, api.PutPool(ctx, booking.Pool{ID: "team", Members: []string{agent(0)}}), "PUT /v1/pools")
	_, created, err := api.PutEndpoint(ctx, "crm", "https://hooks.example.com/b")
	require.NoError(t, err, "PUT /v1/webhooks")
	require.True(t, created)
	_, err = api.RotateSecret(ctx, "crm")
	require.NoError(t, err, "rotate")
	require.NoError(t, api.PauseEndpoint(ctx, "crm", true))
	eps, err := api.Endpoints(ctx)
	require.NoError(t, err, "GET /v1/webhooks reads no key")
	require.Len(t, eps, 1)
	require.Nil(t, eps[0].Secret)

	sealed, err := api.SealContact(ctx, "req_api", booking.Contact{Name: "Ada", Phone: "+33 6 12 34 56 78"}, "Europe/Paris")
	require.NoError(t, err)
	worker := New(as("bookingsaga_worker"), Config{Now: clock.Now})
	req := commitReq("req_api", intent("paris", agent(0), "10:00", "10:30"))
	req.Contact, req.ExpectedPolicyVersion = sealed, p.Version
	_, err = worker.Commit(ctx, req)
	require.NoError(t, err)
	c, err := api.Contact(ctx, "req_api")
	require.NoError(t, err)
	require.Equal(t, "Ada", c.Name)
	require.NoError(t, api.NotePending(ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "req_api"}), "booking.settled, through its function")
	h, created, err := api.RequestHandoff(ctx, booking.Handoff{ConversationID: "c-api", Topic: "advice", Reason: "a question", RequestKeys: []string{"req_api"}})
	require.NoError(t, err, "request_human")
	require.True(t, created)
	ok, err := api.SpendFindAttempt(ctx, "BSAAAAAAAA", 5, time.Hour)
	require.NoError(t, err, "find_booking")
	require.True(t, ok)
	require.NoError(t, api.EraseContact(ctx, "req_api", "asked"), "DELETE /v1/bookings/{key}/contact")
	var erased, handoffs int
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM booking_event WHERE request_key = 'req_api' AND kind = 'contact_erased'").Scan(&erased))
	require.Equal(t, 1, erased, "the erasure is recorded, once")
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM webhook_delivery WHERE event_type = 'handoff.requested' AND (payload->>'handoff_id')::bigint = $1", h.ID).Scan(&handoffs))
	require.Equal(t, 1, handoffs, "handoff.requested went out")
	_, err = pool.Exec(ctx, "SELECT webhook_handoff_requested($1)", h.ID)
	require.NoError(t, err)
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM webhook_delivery WHERE event_type = 'handoff.requested'").Scan(&handoffs))
	require.Equal(t, 1, handoffs, "calling the function again sends nothing more")

	for _, q := range []string{
		"INSERT INTO booking_event (request_key, kind) VALUES ('req_api', 'cancelled')",
		"INSERT INTO webhook_delivery (endpoint_id, event_type, payload) VALUES ('crm', 'booking.confirmed', '{}')",
		"UPDATE booking SET status = 'cancelled'",
		"INSERT INTO booking_refusal (request_key, outcome, code, message, decided_at) VALUES ('x', 'rejected', 'x', 'x', now())",
		"SELECT data_key FROM vault.webhook_key",
		"DELETE FROM booking_event",
	} {
		_, err := pool.Exec(ctx, q)
		require.ErrorContains(t, err, "permission denied", q)
	}
	_, err = api.Release(ctx, ReleaseRequest{RequestKey: "req_api"})
	require.ErrorContains(t, err, "permission denied", "a cancel whose saga is gone goes through a worker")
}
