package store

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

func TestAConflictIsRecordedAndReplayedUnderItsKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := intent("paris", agent(0), "10:00", "10:30")
	f.booked(t, "winner", in)
	lost, err := f.store.Commit(f.ctx, commitReq("loser", in))
	require.NoError(t, err)
	require.NotNil(t, lost.Conflict)

	_, err = f.store.Release(f.ctx, ReleaseRequest{RequestKey: "winner"})
	require.NoError(t, err)
	again, err := f.store.Commit(f.ctx, commitReq("loser", in)) // plain: the fast path's case
	require.NoError(t, err)
	require.NotNil(t, again.Conflict, "the slot is free, but this key was decided")
	require.True(t, again.Replayed)
	require.Equal(t, lost.Conflict.Busy, again.Conflict.Busy)
	d, err := f.store.Decision(f.ctx, "loser")
	require.NoError(t, err)
	require.Nil(t, d.Booking)
	require.Equal(t, booking.RefusedConflict, d.Refusal.Outcome)
	require.Equal(t, in.Normalize(), d.Refusal.Intent)

	_, err = f.store.Commit(f.ctx, commitReq("loser", intent("paris", agent(0), "11:00", "11:30")))
	requireCode(t, err, booking.CodeRequestKeyReused)
}

func TestARejectionIsReplayedEvenOnceTheRequestWouldPass(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("stale", intent("paris", agent(1), "10:00", "10:30"))
	req.ExpectedPolicyVersion = "showing-policy-0"
	_, err := f.store.Commit(f.ctx, req)
	requireCode(t, err, booking.CodePolicyVersionChanged)
	_, err = f.store.Commit(f.ctx, commitReq("stale", req.Intent))
	requireCode(t, err, booking.CodePolicyVersionChanged)
	require.Zero(t, f.count(t)["booking"])
}

func TestACalendarConflictIsTheStoresDecision(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("typed-by-hand", intent("paris", agent(2), "10:00", "10:30"))
	req.CalendarBusy = []booking.Busy{{ResourceID: "paris", Capacity: 1, From: paris("09:45"), To: paris("10:15")}}
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.Equal(t, req.CalendarBusy, out.Conflict.Busy)
	again, err := f.store.Commit(f.ctx, commitReq("typed-by-hand", req.Intent)) // the event was removed since
	require.NoError(t, err)
	require.Equal(t, req.CalendarBusy, again.Conflict.Busy)

	// A booking already under the key outranks a late calendar reading.
	booked := commitReq("booked", intent("paris", agent(3), "12:00", "12:30"))
	first, err := f.store.Commit(f.ctx, booked)
	require.NoError(t, err)
	booked.CalendarBusy = req.CalendarBusy
	replay, err := f.store.Commit(f.ctx, booked)
	require.NoError(t, err)
	require.Nil(t, replay.Conflict)
	require.Equal(t, first.Booking.BookingID, replay.Booking.BookingID)
}

func TestAnUncheckedCalendarIsFlagged(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := commitReq("unchecked", intent("paris", agent(4), "10:00", "10:30"))
	req.CalendarUnchecked = true
	out, err := f.store.Commit(f.ctx, req)
	require.NoError(t, err)
	require.Equal(t, booking.StatusConfirmed, out.Booking.Status)
	var n int
	require.NoError(t, f.pool.QueryRow(f.ctx, "SELECT count(*) FROM booking_event WHERE request_key = 'unchecked' AND kind = 'calendar_unchecked'").Scan(&n))
	require.Equal(t, 1, n)
}

func TestALapsedIntentIsADecision(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := intent("paris", agent(5), "10:00", "10:30")
	d, err := f.store.Lapse(f.ctx, "lapsed", in, testPolicy.Version)
	require.NoError(t, err)
	require.Equal(t, booking.CodeIntentExpired, d.Refusal.Code)
	_, err = f.store.Commit(f.ctx, commitReq("lapsed", in))
	requireCode(t, err, booking.CodeIntentExpired)

	_, err = f.store.Commit(f.ctx, commitReq("booked-first", intent("paris", agent(5), "12:00", "12:30")))
	require.NoError(t, err)
	d, err = f.store.Lapse(f.ctx, "booked-first", intent("paris", agent(5), "12:00", "12:30"), testPolicy.Version)
	require.NoError(t, err)
	require.NotNil(t, d.Booking, "a booking is never turned into a lapse")
	require.Nil(t, d.Refusal)
}

func TestKeyByReference(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.booked(t, "by-ref-booked", intent("paris", agent(6), "10:00", "10:30"))
	_, err := f.store.Commit(f.ctx, commitReq("by-ref-refused", intent("paris", agent(7), "10:00", "10:30")))
	require.NoError(t, err)
	require.NoError(t, f.store.NotePending(f.ctx, booking.PendingCall{Op: booking.PendingCancel, RequestKey: "by-ref-pending"}))
	for _, key := range []string{"by-ref-booked", "by-ref-refused", "by-ref-pending"} {
		got, err := f.store.KeyByReference(f.ctx, receipt.Reference(key))
		require.NoError(t, err, key)
		require.Equal(t, key, got)
	}
	_, err = f.store.KeyByReference(f.ctx, receipt.Reference("never-seen"))
	require.ErrorIs(t, err, booking.ErrNotFound)
	_, err = f.store.KeyByReference(f.ctx, "BS-NOPE")
	requireCode(t, err, booking.CodeInvalidReference)
}

// TestACommitCutOffFromTheServerEndsThere: the connection to the database
// breaks while a commit waits on a lock, and the cancel request that pgx
// sends cannot reach the server either. The server itself gives the
// statement up at the end of its budget, so it can't commit later, behind
// the lookup that found the key absent.
func TestACommitCutOffFromTheServerEndsThere(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var cut atomic.Bool
	cfg := f.pool.Config()
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if cut.Load() {
			return nil, errors.New("partitioned")
		}
		return dial(ctx, network, addr)
	}
	cut.Store(false)
	pool, err := pgxpool.NewWithConfig(f.ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pool.Ping(f.ctx)) // one idle connection, made before the cut
	s := New(pool, Config{Now: f.clock.Now})

	tx, err := f.pool.Begin(f.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(f.ctx, "SELECT FROM resource WHERE resource_id = 'paris' FOR UPDATE")
	require.NoError(t, err)

	cut.Store(true)
	ctx, cancel := context.WithTimeout(f.ctx, 500*time.Millisecond)
	defer cancel()
	_, err = s.Commit(ctx, commitReq("cut-off", intent("paris", agent(8), "10:00", "10:30")))
	require.Error(t, err)
	require.Eventually(t, func() bool {
		var waiting int
		err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == 0
	}, 5*time.Second, 20*time.Millisecond, "the server gave the statement up")
	require.NoError(t, tx.Rollback(f.ctx))
	_, err = f.store.Decision(f.ctx, "cut-off")
	require.ErrorIs(t, err, booking.ErrNotFound, "nothing committed behind the caller's back")
}

func TestTheBudgetBoundsTheFastPathToo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tx, err := f.pool.Begin(f.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(f.ctx, "SELECT FROM resource WHERE resource_id = 'paris' FOR UPDATE")
	require.NoError(t, err)
	// The server's budget is nine tenths of the caller's; a caller's
	// budget of seconds leaves a margin that a loaded CI machine (the race
	// detector beside a fault run) still keeps, where 400 ms did not.
	ctx, cancel := context.WithTimeout(f.ctx, 3*time.Second)
	defer cancel()
	_, err = f.store.Commit(ctx, commitReq("bounded", intent("paris", agent(9), "10:00", "10:30")))
	require.ErrorIs(t, err, ErrTimeout, "the server ended it, before the caller's deadline")
}
