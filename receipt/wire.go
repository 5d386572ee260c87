package receipt

import (
	"time"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// OnWire is a receipt in its wire shape, on every route and tool that
// returns one (HTTP, MCP, the CLI): local_start in the form requests use
// (YYYY-MM-DDTHH:MM, the property's wall time), alternatives likewise,
// instants in UTC, the reference always.
func OnWire(r Receipt) Receipt {
	loc, err := localtime.LoadZone(r.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	r.StartsAt, r.EndsAt, r.CommittedAt, r.HoldExpiresAt = utc(r.StartsAt), utc(r.EndsAt), utc(r.CommittedAt), utc(r.HoldExpiresAt)
	r.ReconfirmedAt = utc(r.ReconfirmedAt)
	if r.StartsAt != nil && r.TimeZone != "" {
		r.LocalStart = r.StartsAt.In(loc).Format(localtime.Layout)
	}
	alts := make([]Slot, len(r.Alternatives))
	for i, a := range r.Alternatives {
		alts[i] = Slot{StartsAt: a.StartsAt.UTC(), EndsAt: a.EndsAt.UTC(), LocalStart: a.StartsAt.In(loc).Format(localtime.Layout)}
	}
	if len(alts) > 0 {
		r.Alternatives = alts
	}
	if r.Reference == "" && r.RequestKey != "" {
		r.Reference = Reference(r.RequestKey)
	}
	return r
}
