package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/internal/receipt"
	"github.com/bookingsaga/bookingsaga/schema"
	"github.com/bookingsaga/bookingsaga/starter/api"
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
	pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	require.NoError(t, err)
	// Every backend calls setsid, so the signal goes to the postmaster and
	// to each of its children by name.
	signal := func(sig syscall.Signal) {
		for _, p := range append(children(t, pid), pid) {
			require.NoError(t, syscall.Kill(p, sig))
		}
	}
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	return pool, signal
}

// children lists the processes whose parent is pid, from /proc.
func children(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its ")".
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, child)
		}
	}
	return out
}

// TestAFrozenDatabaseStillGetsEveryCallAnswered freezes PostgreSQL for 20 s
// while callers book. Every call is answered within the commit wait and
// half a second: decided, or pending with a reference, a conflict without
// its alternatives rather than late. After the thaw, every pending key
// settles and agrees with the store.
func TestAFrozenDatabaseStillGetsEveryCallAnswered(t *testing.T) {
	pool, signal := frozenCluster(t)
	f := setupOn(t, pool)
	url := f.serveAPI(api.Config{CallTimeout: time.Minute})
	bound := f.settings.WithDefaults().CommitWait + 500*time.Millisecond

	type call struct {
		key    string
		status receipt.Status
		alts   int
		took   time.Duration
	}
	var mu sync.Mutex
	var calls []call
	book := func(key string, hour, minute int) {
		start := time.Now()
		var r receipt.Receipt
		code := f.call("POST", url+"/v1/bookings", bookingBody(key, slot(t, hour).Add(time.Duration(minute)*time.Minute)), &r)
		took := time.Since(start)
		require.Equal(t, http.StatusOK, code)
		mu.Lock()
		calls = append(calls, call{key: key, status: r.Status, alts: len(r.Alternatives), took: took})
		mu.Unlock()
	}
	load := func(from, to time.Time) {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := 0; time.Now().Before(to); i++ {
					if time.Now().Before(from) {
						continue
					}
					// Four callers over a few slots: bookings, duplicates' rivals, conflicts.
					book(uuid.NewString(), 9+(w*7+i)%10, 30*(i%2))
				}
			})
		}
		wg.Wait()
	}
	now := time.Now()
	load(now, now.Add(2*time.Second)) // warm, unfrozen
	signal(syscall.SIGSTOP)
	frozenAt := time.Now()
	load(frozenAt, frozenAt.Add(20*time.Second))
	signal(syscall.SIGCONT)

	pending := 0
	byStatus := map[receipt.Status]int{}
	for _, c := range calls {
		byStatus[c.status]++
	}
	t.Logf("answers: %v", byStatus)
	for _, c := range calls {
		require.LessOrEqual(t, c.took, bound, "%s answered %s after %s", c.key, c.status, c.took)
		if c.status == receipt.StatusPending {
			pending++
		}
	}
	require.Positive(t, pending, "the freeze was felt")
	for _, c := range calls {
		f.eventually(func() bool {
			var r receipt.Receipt
			return f.call("GET", url+"/v1/bookings/"+c.key, nil, &r) == http.StatusOK && r.Status != receipt.StatusPending
		}, "every pending key settles after the thaw")
		var r receipt.Receipt
		require.Equal(t, http.StatusOK, f.call("GET", url+"/v1/bookings/"+c.key, nil, &r))
		var status string
		err := f.pool.QueryRow(f.ctx, "SELECT status FROM booking WHERE request_key = $1", c.key).Scan(&status)
		if r.Status == receipt.StatusConfirmed {
			require.NoError(t, err)
			require.Equal(t, "confirmed", status, c.key)
		} else {
			require.Error(t, err, "%s reads %s but the store booked it", c.key, r.Status)
		}
	}
	t.Log(fmt.Sprintf("%d calls, %d pending during the freeze", len(calls), pending))
}
