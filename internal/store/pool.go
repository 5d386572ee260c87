package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// PutPool creates or replaces a team of agents a booking may ask for
// instead of one agent. Its members must be agents; nothing is written
// otherwise.
func (s *Store) PutPool(ctx context.Context, p booking.Pool) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("put pool %s: %w", p.ID, err)
	}
	return s.retry(ctx, "put pool", p.ID, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT resource_id, kind FROM resource WHERE resource_id = ANY($1)`, p.Members)
			if err != nil {
				return err
			}
			kinds := map[string]string{}
			var id, kind string
			if _, err := pgx.ForEachRow(rows, []any{&id, &kind}, func() error { kinds[id] = kind; return nil }); err != nil {
				return err
			}
			for _, m := range p.Members {
				switch k, ok := kinds[m]; {
				case !ok:
					return booking.Rejectf(booking.CodeUnknownResource, "unknown resource %s", m)
				case k != "agent":
					return booking.Rejectf(booking.CodeWrongResourceKind, "pool member %q is a %s, not an agent", m, k)
				}
			}
			_, err = tx.Exec(ctx, `INSERT INTO agent_pool (pool_id, members) VALUES ($1, $2)
ON CONFLICT (agency_no, pool_id) DO UPDATE SET members = excluded.members, updated_at = now()`, p.ID, p.Members)
			return err
		})
	})
}

// Pool reads a pool.
func (s *Store) Pool(ctx context.Context, id string) (booking.Pool, error) {
	members, err := poolMembers(ctx, s.pool, id)
	if err != nil {
		return booking.Pool{}, fmt.Errorf("pool %s: %w", id, err)
	}
	return booking.Pool{ID: id, Members: members}, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func poolMembers(ctx context.Context, q querier, id string) ([]string, error) {
	var members []string
	err := q.QueryRow(ctx, `SELECT members FROM agent_pool WHERE pool_id = $1`, id).Scan(&members)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, booking.Rejectf(booking.CodeUnknownPool, "no agent pool %q", id)
	}
	return members, err
}

// choose picks the agent of a pool request under the locks: the members
// in fairness order (fewest live bookings that local day, then the one
// assigned longest ago, then by id), the first that the rules and the
// capacity allow. It returns the request naming that agent and the state
// narrowed to its resources. When no member can take it: a conflict if
// any member was only busy, else the first member's refusal.
func (st *commitState) choose(req CommitRequest, now time.Time) (CommitRequest, *commitState, []booking.Busy, error) {
	if st.poolErr != nil {
		return req, st, nil, st.poolErr
	}
	var refusal error
	var busy []booking.Busy
	for _, m := range st.byFairness(req.Intent.StartsAt) {
		try := req
		try.Intent.AgentID = m.ID
		view := st.narrow(try.Intent)
		if err := view.check(try, now); err != nil {
			var rej *booking.Rejection
			if !errors.As(err, &rej) {
				return req, nil, nil, err
			}
			if refusal == nil {
				refusal = err
			}
			continue
		}
		if b, _ := view.busy(now); len(b) > 0 {
			busy = append(busy, b...)
			continue
		}
		if b := view.calendarBusy(req.CalendarBusy); len(b) > 0 {
			busy = append(busy, b...)
			continue
		}
		// What the calendars show of the others is not this booking's.
		try.CalendarBusy = nil
		return try, view, nil, nil
	}
	if len(busy) > 0 {
		return req, st, busy, nil
	}
	if refusal == nil {
		refusal = booking.Rejectf(booking.CodeEmptyPool, "pool %s has no member that can be this booking's agent", req.Intent.AgentPool)
	}
	return req, st, nil, refusal
}

// byFairness orders the pool's locked members: fewest live bookings on the
// slot's local day, then the one whose latest booking was made longest ago
// (round robin), then by id.
func (st *commitState) byFairness(start time.Time) []*lockedResource {
	type ranked struct {
		r      *lockedResource
		day    int
		latest time.Time
	}
	var out []ranked
	for _, r := range st.resources {
		// A member the request names as another resource (a key holder)
		// cannot also be its agent.
		if !slices.Contains(st.members, r.ID) || slices.Contains(st.asked, r.ID) {
			continue
		}
		loc := time.UTC
		if l, err := localtime.LoadZone(r.TimeZone); err == nil {
			loc = l
		}
		k := ranked{r: r}
		for i, s := range r.starts {
			if booking.SameLocalDay(s, start, loc) {
				k.day++
			}
			if r.created[i].After(k.latest) {
				k.latest = r.created[i]
			}
		}
		out = append(out, k)
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		if a.day != b.day {
			return a.day - b.day
		}
		if c := a.latest.Compare(b.latest); c != 0 {
			return c
		}
		return compareStrings(a.r.ID, b.r.ID)
	})
	rs := make([]*lockedResource, len(out))
	for i, k := range out {
		rs[i] = k.r
	}
	return rs
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// calendarBusy is what the calendars showed busy of st's resources.
func (st *commitState) calendarBusy(all []booking.Busy) []booking.Busy {
	var out []booking.Busy
	for _, b := range all {
		if st.resource(b.ResourceID) != nil {
			out = append(out, b)
		}
	}
	return out
}

// narrow is st seen through one intent: its resources only.
func (st *commitState) narrow(in booking.Intent) *commitState {
	view := *st
	view.resources = nil
	for _, id := range in.Resources() {
		if r := st.resource(id); r != nil {
			view.resources = append(view.resources, r)
		}
	}
	slices.SortFunc(view.resources, func(a, b *lockedResource) int { return compareStrings(a.ID, b.ID) })
	return &view
}
