package systemtest

import (
	"context"
	"github.com/bookingsaga/bookingsaga/app"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/schema"
)

// frozenCluster is a PostgreSQL cluster of the test's own, which it can
// freeze (SIGSTOP of every process) without touching other tests'.
func frozenCluster(t *testing.T) (*pgxpool.Pool, func(syscall.Signal)) {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bookingsaga-frozen-")
	require.NoError(t, err)
	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Stop(); _ = os.RemoveAll(dir) })
	pool, err := pgxpool.New(ctx, srv.ConnString("postgres"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, schema.Migrate(ctx, conn.Conn()))
	conn.Release()
	signal := func(sig syscall.Signal) { require.NoError(t, srv.Signal(sig)) }
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	return pool, signal
}

// TestAFrozenDatabaseStillGetsEveryCallAnswered freezes PostgreSQL for 20 s
// while callers book and cancel. Every call is answered within the commit
// wait and half a second: decided, or pending with a reference. After the
// thaw, every pending key settles and agrees with the store.
func TestAFrozenDatabaseStillGetsEveryCallAnswered(t *testing.T) {
	pool, signal := frozenCluster(t)
	f := setupOn(t, pool)
	url := f.serveAPI(app.EdgeConfig{Config: edge.Config{CallTimeout: time.Minute}})
	bound := f.settings.WithDefaults().CommitWait + 500*time.Millisecond

	var mu sync.Mutex
	var calls []frozenCall
	var confirmed []string
	do := func(kind, key string, send func(any) int) {
		start := time.Now()
		var r struct {
			receipt.Receipt
			Retryable bool `json:"retryable"`
		}
		code := send(&r)
		took := time.Since(start)
		if code == http.StatusServiceUnavailable && kind == "reschedule" {
			// The old booking could not be read within the budget: nothing
			// was sent, and the answer says retry, with no status.
			require.True(t, r.Retryable, "a 503 says retryable")
			require.Empty(t, r.Status, "a call not sent says no status")
		} else {
			require.Equal(t, http.StatusOK, code, "%s %s", kind, key)
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, frozenCall{kind: kind, key: key, status: r.Status, took: took, code: code})
		if kind == "book" && r.Status == receipt.StatusConfirmed {
			confirmed = append(confirmed, key)
		}
	}
	book := func(hour, minute int) {
		key := uuid.NewString()
		do("book", key, func(r any) int {
			return f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, hour).Add(time.Duration(minute)*time.Minute)), r)
		})
	}
	cancel := func() {
		mu.Lock()
		if len(confirmed) == 0 {
			mu.Unlock()
			return
		}
		key := confirmed[0]
		confirmed = confirmed[1:]
		mu.Unlock()
		do("cancel", key, func(r any) int { return f.call("POST", url+"/v1/bookings/"+key+"/cancel", nil, r) })
	}
	takeConfirmed := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(confirmed) == 0 {
			return ""
		}
		key := confirmed[len(confirmed)-1]
		confirmed = confirmed[:len(confirmed)-1]
		return key
	}
	reschedule := func(i int) {
		old := takeConfirmed()
		if old == "" {
			return
		}
		key := uuid.NewString()
		moved := slot(t, 9+i%10).Add(time.Duration(15*(1+i%3)) * time.Minute)
		do("reschedule", key, func(r any) int {
			return f.call("POST", url+"/v1/bookings/"+old+"/reschedule",
				edge.RescheduleBody{NewRequestKey: key, Slot: edge.Slot{StartsAt: moved.Format(time.RFC3339)}}, r)
		})
	}
	status := func() {
		key := takeConfirmed()
		if key == "" {
			return
		}
		do("status", key, func(r any) int { return f.call("GET", url+"/v1/bookings/"+key, nil, r) })
		mu.Lock()
		confirmed = append(confirmed, key)
		mu.Unlock()
	}
	hold := func(i int) {
		var held api.IntentAnswer
		start := time.Now()
		code := f.call("POST", url+"/v1/intents", api.IntentBody{ConversationID: "call-" + uuid.NewString(),
			Slot: bookingBody("", slot(t, 9+i%10).Add(45*time.Minute)).Slot, Hold: true, ExpectedPolicyVersion: policyVersion}, &held)
		mu.Lock()
		defer mu.Unlock()
		c := frozenCall{kind: "hold", key: held.RequestKey, took: time.Since(start), code: code}
		if held.Hold != nil {
			c.status = held.Hold.Status
		}
		calls = append(calls, c)
	}
	load := func(until time.Time) {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := 0; time.Now().Before(until); i++ {
					switch {
					case w == 3 && i%2 == 1:
						cancel()
						continue
					case w == 2 && i%2 == 1:
						reschedule(i)
						continue
					case w == 1 && i%3 == 1:
						status()
						continue
					case w == 0 && i%4 == 1:
						hold(i)
						continue
					}
					// Four callers over a few slots: bookings and conflicts.
					book(9+(w*7+i)%10, 30*(i%2))
				}
			})
		}
		wg.Wait()
	}
	load(time.Now().Add(2 * time.Second)) // warm, unfrozen
	signal(syscall.SIGSTOP)
	load(time.Now().Add(20 * time.Second))
	signal(syscall.SIGCONT)

	answers := map[string]int{}
	for _, c := range calls {
		answers[c.kind+" "+string(c.status)]++
		require.LessOrEqual(t, c.took, bound, "%s %s answered %s after %s", c.kind, c.key, c.status, c.took)
	}
	t.Logf("answers: %v", answers)
	require.Positive(t, answers["book pending_reconciliation"], "the freeze was felt by bookings")
	require.Positive(t, answers["cancel pending_reconciliation"], "and by cancels")
	for _, kind := range []string{"reschedule", "status", "hold"} {
		n := 0
		for k, v := range answers {
			if strings.HasPrefix(k, kind+" ") {
				n += v
			}
		}
		require.Positive(t, n, "the load made %s calls", kind)
	}
	for _, c := range calls {
		if c.kind == "hold" || c.kind == "status" || c.code == http.StatusServiceUnavailable {
			continue // reads, holds under their conversations' keys, and calls that sent nothing
		}
		// A cancel answered pending on a booking read confirmed lands
		// after the thaw, so the receipt and the store are compared once
		// they agree or the wait ends, and then asserted.
		var r receipt.Receipt
		var status string
		var err error
		f.eventually(func() bool {
			r = receipt.Receipt{}
			if f.call("GET", url+"/v1/bookings/"+c.key, nil, &r) != http.StatusOK || r.Status == receipt.StatusPending {
				return false
			}
			status = ""
			err = f.pool.QueryRow(f.ctx, "SELECT status FROM booking WHERE request_key = $1", c.key).Scan(&status)
			return receiptMatches(r.Status, status, err)
		}, "every pending key settles after the thaw, its receipt what the store holds")
		switch r.Status {
		case receipt.StatusConfirmed, receipt.StatusCancelled:
			require.NoError(t, err, c.key)
			require.Equal(t, string(r.Status), status, "%s: the receipt says what the store holds", c.key)
		case receipt.StatusRescheduled: // a confirmed booking the load moved since
			require.NoError(t, err, c.key)
			require.Equal(t, string(booking.StatusReleasedForReschedule), status, c.key)
		default:
			require.Error(t, err, "%s reads %s but the store booked it", c.key, r.Status)
		}
	}
}

// receiptMatches says whether a receipt's status is what the store's row
// (its status, or err when there is none) says.
func receiptMatches(r receipt.Status, status string, err error) bool {
	switch r {
	case receipt.StatusConfirmed, receipt.StatusCancelled:
		return err == nil && string(r) == status
	case receipt.StatusRescheduled:
		return err == nil && status == string(booking.StatusReleasedForReschedule)
	default:
		return err != nil
	}
}

type frozenCall struct {
	kind, key string
	status    receipt.Status
	took      time.Duration
	code      int
}
