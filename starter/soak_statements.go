package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// statements accounts for the store's statements over a rate, from
// PostgreSQL's pg_stat_statements: reset before the rate, read after,
// each statement per confirmed booking with who issues it. The store's
// server must preload the module (`go run ./chaos -serve` does).
type statements struct {
	pool *pgxpool.Pool
}

// openStatements connects to the store's database as a login that may
// create the extension and reset its counters (the owner's, or a
// superuser's).
func openStatements(ctx context.Context, url string) (*statements, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("statements: connect: %w", err)
	}
	_, err = pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	if err == nil {
		_, err = pool.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("statements: the store's PostgreSQL must preload pg_stat_statements (go run ./chaos -serve does): %w", err)
	}
	return &statements{pool: pool}, nil
}

// statement is one normalised statement's work over a rate.
type statement struct {
	query       string
	calls, rows int64
	ms          float64
}

// over runs a rate with the counters reset, and keeps what its
// statements did.
func (s *statements) over(ctx context.Context, run func() soakRow) (soakRow, []statement, error) {
	// The tables' statistics first, as autovacuum keeps them on a store in
	// service: a store a minute old has none, and plans on guesses (a
	// generic plan of the commit's occupancy read touched 44,000 buffers
	// a call so, 60 once analysed).
	if _, err := s.pool.Exec(ctx, `ANALYZE`); err != nil {
		return soakRow{}, nil, fmt.Errorf("statements: analyze: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		return soakRow{}, nil, fmt.Errorf("statements: reset: %w", err)
	}
	row := run()
	rows, err := s.pool.Query(ctx, `SELECT query, calls, rows, total_exec_time FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
ORDER BY total_exec_time DESC`)
	if err != nil {
		return row, nil, fmt.Errorf("statements: read: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statement, error) {
		var st statement
		return st, r.Scan(&st.query, &st.calls, &st.rows, &st.ms)
	})
	if err != nil {
		return row, nil, fmt.Errorf("statements: read: %w", err)
	}
	return row, out, nil
}

func (s *statements) close() { s.pool.Close() }

// issuers name who issues a statement, by what it touches: the first
// rule that matches wins. A statement no rule knows is "other", which the
// table shows, so that a new one is seen.
var issuers = []struct {
	re  *regexp.Regexp
	who string
}{
	{regexp.MustCompile(`(?i)set_config\('bookingsaga\.agency'`), "every transaction: its agency (row-level security)"},
	{regexp.MustCompile(`(?i)NEW\.kind IN \(.conflict`), "outbox: a refusal after a pending answer (trigger)"},
	{regexp.MustCompile(`(?i)NEW\.request_key, k|caller_message|^\s*k IS NOT NULL AND NEW\.booking_id`), "outbox and sender"},
	{regexp.MustCompile(`(?i)k\.data_key|WITH RECURSIVE chain`), "contacts: sealing (API), reading (sender, mirrors)"},
	{regexp.MustCompile(`(?i)^\s*WITH b AS \(\s*SELECT booking_id, nullif\(\$2::text, provider_event_id\)`), "mirrors: calendar and CRM"},
	{regexp.MustCompile(`(?i)^\s*WITH locked AS|o\.booking_id, o\.status|FOR NO KEY UPDATE|reference = request_reference|` +
		`INSERT INTO booking \(|INSERT INTO booking_event|booking_refusal|booking_resource SET|statement_timeout|WITH b AS \(\s*UPDATE booking|UPDATE booking SET status`),
		"commit: locks, occupancy, the decision, its events"},
	{regexp.MustCompile(`(?i)live_occupancy\(r\.id`), "API: availability"},
	{regexp.MustCompile(`(?i)caller_link|agency_profile`), "sender: the caller's link and the agency's name"},
	{regexp.MustCompile(`(?i)webhook_`), "webhooks"},
	{regexp.MustCompile(`(?i)pending_call|note_pending`), "API: pending notes; reconciliation"},
	{regexp.MustCompile(`(?i)provider_event_id|crm_ref|drift_flag|calendar_synced|crm_contact`), "mirrors: calendar and CRM"},
	{regexp.MustCompile(`(?i)WITH RECURSIVE chain|vault\.contact_key|booking_contact|lookup_key`), "contacts: sealing (API), reading (sender, mirrors)"},
	{regexp.MustCompile(`(?i)^\s*SELECT booking_id, request_key, status`), "booking reads: mirrors, sender, status"},
	{regexp.MustCompile(`(?i)from agency|mirror_account|platform_secret`), "agency and its accounts"},
	{regexp.MustCompile(`(?i)resource|policy|agent_pool`), "catalogue: resources and policy"},
	{regexp.MustCompile(`(?i)^\s*(begin|commit|rollback)\b`), "transaction control"},
	{regexp.MustCompile(`(?i)pg_catalog|pg_is_in_recovery|^select \$1$|^select 1|version\(\)|pg_database`), "health, metrics, pool checks"},
}

func issuer(query string) string {
	for _, r := range issuers {
		if r.re.MatchString(query) {
			return r.who
		}
	}
	return "other"
}

// printStatements prints what each statement, and each issuer, did per
// confirmed booking at a rate, the costliest first; top bounds the
// statements listed (the issuers' totals count them all).
func printStatements(out io.Writer, rate float64, confirmed int, sts []statement, top int) {
	if confirmed == 0 {
		fmt.Fprintf(out, "\nstatements at %.0f/s: no booking confirmed\n", rate)
		return
	}
	per := func(n float64) float64 { return n / float64(confirmed) }
	type total struct {
		calls, rows int64
		ms          float64
	}
	by, all := map[string]*total{}, total{}
	var order []string
	for _, st := range sts {
		who := issuer(st.query)
		if by[who] == nil {
			by[who] = &total{}
			order = append(order, who)
		}
		t := by[who]
		t.calls, t.rows, t.ms = t.calls+st.calls, t.rows+st.rows, t.ms+st.ms
		all.calls, all.rows, all.ms = all.calls+st.calls, all.rows+st.rows, all.ms+st.ms
	}
	fmt.Fprintf(out, "\nstatements at %.0f/s, per confirmed booking (%d confirmed): %.1f statements, %.0f rows, %.2f ms of PostgreSQL execution (waits for row locks included)\n",
		rate, confirmed, per(float64(all.calls)), per(float64(all.rows)), per(all.ms))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "issuer\tstatements\trows\tms\tshare of ms\t")
	for _, who := range order {
		t := by[who]
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.3f\t%.0f%%\t\n", who, per(float64(t.calls)), per(float64(t.rows)), per(t.ms), 100*t.ms/all.ms)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nstatement\tissuer\tcalls\trows\tms\t")
	for i, st := range sts {
		if i == top {
			fmt.Fprintf(tw, "... %d more\t\t\t\t\t\n", len(sts)-top)
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.1f\t%.3f\t\n", oneLine(st.query, 100), issuer(st.query), per(float64(st.calls)), per(float64(st.rows)), per(st.ms))
	}
	tw.Flush()
}

// oneLine is q on one line, cut at n runes.
func oneLine(q string, n int) string {
	q = strings.Join(strings.Fields(q), " ")
	if r := []rune(q); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return q
}
