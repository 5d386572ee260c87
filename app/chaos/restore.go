package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/desk"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The restore campaign (Options.Restore): the store is restored from a
// backup taken mid-load, as after a restore or a failover to a lagging
// replica, while Temporal keeps every saga. Confirmations given between
// the backup and the restore are then lost by the store. The run checks
// that each one is flagged for operators and keeps its calendar events,
// runs ops restore on each, and holds every other invariant as usual.

// restoreFault dumps the store when it breaks, and restores that dump,
// with the workers and the APIs down meanwhile, when it mends.
func (c *cluster) restoreFault() faultSpec {
	dump := filepath.Join(c.dir, "store-backup.dump")
	return faultSpec{name: restoredFault,
		inject: func(ctx context.Context) error { return c.pgTool(ctx, "pg_dump", "-Fc", "-f", dump) },
		restore: func(ctx context.Context) error {
			for _, slot := range slots {
				c.api(slot).kill()
				c.worker(slot).kill()
			}
			if err := c.pgTool(ctx, "pg_restore", "--clean", "--if-exists", "--single-transaction", dump); err != nil {
				return err
			}
			return errors.Join(c.startPair(ctx, "a"), c.startPair(ctx, "b"))
		}}
}

// restoredFault names the restore campaign's fault.
const restoredFault = "store restored from a backup taken mid-load"

// pgTool runs one of PostgreSQL's client programs against the store's
// database.
func (c *cluster) pgTool(ctx context.Context, tool string, args ...string) error {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + tool)
	if len(bins) == 0 {
		return fmt.Errorf("%s: not installed", tool)
	}
	sort.Strings(bins)
	c.mu.Lock()
	db := c.adminURL // the store's database, wherever its socket is
	c.mu.Unlock()
	out, err := exec.CommandContext(ctx, bins[len(bins)-1], append([]string{"-d", db}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", tool, err, out)
	}
	return nil
}

// lostBookings checks what the store lost after a restore and restores
// it: the keys answered confirmed that the store has no record of must
// each be flagged store_lost_booking and keep their calendar events; ops
// restore is then run on each.
func (c *cluster) lostBookings(ctx context.Context, pool *pgxpool.Pool, calls []Call) ([]Invariant, string, map[string]bool, error) {
	lost, err := confirmedButUnknown(ctx, pool, calls)
	if err != nil {
		return nil, "", nil, err
	}
	var changed, flaggedLost []string
	if err := pgxCollect(ctx, pool, "SELECT request_key FROM drift_flag WHERE kind = 'store_lost_change' AND resolved_at IS NULL ORDER BY flag_id", &changed); err != nil {
		return nil, "", nil, err
	}
	if err := pgxCollect(ctx, pool, "SELECT request_key FROM drift_flag WHERE kind = 'store_lost_booking' AND resolved_at IS NULL ORDER BY flag_id", &flaggedLost); err != nil {
		return nil, "", nil, err
	}
	unflagged, deleted := c.lostUnseen(lost, flaggedLost)
	// A backend retrying, or a model re-issuing, the book of a lost
	// booking before anyone restores it: never answered confirmed.
	resent, err := c.resendLost(ctx, calls, lost)
	if err != nil {
		return nil, "", nil, err
	}
	// As an operator would from ops attention: each lost change applied
	// again first (a cancellation frees the slot a later lost booking
	// took), then each lost booking restored.
	if _, err := c.restoreAll(ctx, pool, changed); err != nil { // applied again: their answer is the release
		return nil, "", nil, err
	}
	notConfirmed, err := c.restoreAll(ctx, pool, flaggedLost)
	if err != nil {
		return nil, "", nil, err
	}
	refused, answers := map[string]bool{}, map[receipt.Status]int{}
	for k, st := range notConfirmed {
		refused[k] = true
		answers[st]++
	}
	summary := fmt.Sprintf("the store lost %d confirmed bookings whose callers changed nothing since, %d of them flagged; "+
		"ops restore brought back %d of the %d flagged lost bookings, the others answered %v; "+
		"and %d cancellations or moves, flagged and applied again",
		len(lost), len(lost)-len(unflagged), len(flaggedLost)-len(refused), len(flaggedLost), answers, len(changed))
	summary += fmt.Sprintf("; %d re-sent books of lost bookings, none to be answered confirmed", len(lost))
	return []Invariant{{Name: "every lost confirmation flagged for operators", Violations: unflagged},
		{Name: "no event of a lost booking deleted", Violations: deleted},
		{Name: "a re-sent book of a lost booking is never confirmed", Violations: resent}}, summary, refused, nil
}

// resendLost sends again, through the API, the book each lost key was
// confirmed by, and lists the answers that said confirmed for a booking
// the store does not hold.
func (c *cluster) resendLost(ctx context.Context, calls []Call, lost []string) ([]string, error) {
	first := map[string]*receipt.Receipt{}
	for _, call := range calls {
		if r := call.Receipt; call.Op == "book" && r != nil && r.Status == receipt.StatusConfirmed && first[r.RequestKey] == nil {
			first[r.RequestKey] = r
		}
	}
	cl := &caller{agency: agency.Default.ID, urls: c.apiURLs(0), key: c.apiKey, http: &http.Client{Timeout: 10 * time.Second}, hist: &history{}}
	var violations []string
	for _, k := range lost {
		r := first[k]
		if r == nil || r.StartsAt == nil || r.EndsAt == nil {
			continue
		}
		body := api.BookingBody{RequestKey: k, ExpectedPolicyVersion: r.PolicyVersion, Slot: edge.Slot{PropertyID: r.PropertyRef,
			AgentID: r.AgentRef, StartsAt: r.StartsAt.Format(time.RFC3339), EndsAt: r.EndsAt.Format(time.RFC3339), TimeZone: r.TimeZone}}
		var again receipt.Receipt
		if _, _, err := cl.post(ctx, "/v1/bookings", body, &again); err != nil {
			return nil, fmt.Errorf("re-send book %s: %w", k, err)
		}
		if again.Status == receipt.StatusConfirmed {
			violations = append(violations, k+": the store lost it, and its book re-sent was answered confirmed")
		}
	}
	return violations, nil
}

// lostUnseen lists the lost confirmations no flag names, and those whose
// calendar events were deleted.
func (c *cluster) lostUnseen(lost, flaggedLost []string) (unflagged, deleted []string) {
	for _, k := range lost {
		if !slices.Contains(flaggedLost, k) {
			unflagged = append(unflagged, k+" was answered confirmed, the store lost it, and no operator is told")
		}
		for _, r := range resources(agency.Default.ID) {
			if r.CalendarID == "" || r.CalendarProvider == booking.ProviderMicrosoft {
				continue
			}
			for _, ev := range c.calendar.Events(r.CalendarID) {
				if ev.Id == gcal.EventID(k) && ev.Status == "cancelled" {
					deleted = append(deleted, k+"'s event in "+r.CalendarID+" was deleted on the store's word alone")
				}
			}
		}
	}
	return unflagged, deleted
}

// pgxCollect reads one text column of query into out.
func pgxCollect(ctx context.Context, pool *pgxpool.Pool, query string, out *[]string) error {
	rows, err := pool.Query(ctx, query)
	if err != nil {
		return err
	}
	*out, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return err
}

// confirmedButUnknown are the keys some call was answered confirmed for
// that the store has no record of at all.
func confirmedButUnknown(ctx context.Context, pool *pgxpool.Pool, calls []Call) ([]string, error) {
	seen := map[string]bool{}
	for _, c := range calls { // a booking its caller then cancelled or moved is not one to restore
		if changes(c.Op) {
			seen[c.Key] = true
		}
	}
	var keys []string
	for _, c := range calls {
		if r := c.Receipt; r != nil && r.Status == receipt.StatusConfirmed && !seen[r.RequestKey] {
			seen[r.RequestKey] = true
			keys = append(keys, r.RequestKey)
		}
	}
	rows, err := pool.Query(ctx, `SELECT k FROM unnest($1::text[]) AS k
WHERE NOT EXISTS (SELECT FROM booking WHERE request_key = k) AND NOT EXISTS (SELECT FROM booking_refusal WHERE request_key = k)
ORDER BY k`, keys)
	if err != nil {
		return nil, err
	}
	var lost []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		lost = append(lost, k)
	}
	return lost, rows.Err()
}

// restoreAll runs ops restore on each lost key, as an operator would, and
// returns the keys the store refused (their slot taken meanwhile): those
// are told the refusal, which the confirmed-stays check then allows.
func (c *cluster) restoreAll(ctx context.Context, pool *pgxpool.Pool, lost []string) (map[string]receipt.Status, error) {
	tc, err := client.Dial(client.Options{HostPort: c.temporalAddr, Namespace: Namespace, Logger: zaplog.New(zap.NewNop())})
	if err != nil {
		return nil, fmt.Errorf("connect temporal: %w", err)
	}
	defer tc.Close()
	sc := desk.New(tc, &catalog.Catalog{Store: store.New(pool, store.Config{}), Log: zap.NewNop()}, desk.Options{})
	refused := map[string]receipt.Status{}
	for _, k := range lost {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r, err := sc.Restore(rctx, k)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("ops restore %s: %w", k, err)
		}
		if r.Status != receipt.StatusConfirmed {
			refused[k] = r.Status
		}
	}
	return refused, nil
}
