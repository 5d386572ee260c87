package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/bookingsaga/bookingsaga/booking"
)

// freeTeamSQL lists the agents who share a team (an agent pool) with $1
// and have room from $2 to $3, their own buffers included: who could take
// a booking $1 can no longer keep. Their hours and time off are checked
// after, as the commit checks them.
const freeTeamSQL = `
SELECT r.resource_id, r.time_zone, r.rules
FROM (SELECT DISTINCT unnest(members) AS id FROM agent_pool WHERE $1 = ANY(members)) m
JOIN resource r ON r.resource_id = m.id
JOIN resource_buffers rb ON rb.resource_id = m.id
WHERE m.id <> $1 AND r.kind = 'agent'
  AND (SELECT count(*) FROM live_occupancy(m.id, tstzrange($2::timestamptz - make_interval(mins => rb.before_minutes),
                                                           $3::timestamptz + make_interval(mins => rb.after_minutes)))) < r.capacity
ORDER BY r.resource_id`

// coverFor fills in, for each booking whose agent's own rules no longer
// allow it (time off added over it, say), the team members free then: an
// operator can move it to one of them (a reassignment).
func (s *Store) coverFor(ctx context.Context, out []booking.OutsideRules, agentOf map[string]string) error {
	for i, o := range out {
		if agentOf[o.RequestKey] != o.ResourceID {
			continue // a property's or key holder's rules: another agent won't help
		}
		rows, err := s.pool.Query(ctx, freeTeamSQL, o.ResourceID, o.StartsAt, o.EndsAt)
		if err != nil {
			return err
		}
		var id, zone string
		var rules *booking.Rules
		_, err = pgx.ForEachRow(rows, []any{&id, &zone, &rules}, func() error {
			if ownRulesRefuse(rules, zone, o.StartsAt, o.EndsAt) == nil {
				out[i].FreeAgents = append(out[i].FreeAgents, id)
			}
			rules = nil
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
