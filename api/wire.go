package api

import (
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The API's answers are wire structs of their own, not the domain's
// records: a field renamed inside the service does not change what agents
// parse. (Receipts are already a wire shape: package receipt.)

// AvailabilityAnswer is GET /v1/availability: free slots under a policy
// version, as of a moment. An offer, not a promise.
type AvailabilityAnswer struct {
	PolicyVersion string       `json:"policy_version"`
	ZoneRules     string       `json:"zone_rules"`
	SnapshotAt    time.Time    `json:"snapshot_at"`
	TimeZone      string       `json:"time_zone"`
	Slots         []SlotAnswer `json:"slots"`
}

// SlotAnswer is one free start.
type SlotAnswer struct {
	StartsAt   time.Time `json:"starts_at"`
	EndsAt     time.Time `json:"ends_at"`
	LocalStart string    `json:"local_start"`
}

func availabilityAnswer(av booking.Availability) AvailabilityAnswer {
	out := AvailabilityAnswer{PolicyVersion: av.PolicyVersion, ZoneRules: av.ZoneRules, SnapshotAt: av.SnapshotAt, TimeZone: av.TimeZone,
		Slots: make([]SlotAnswer, 0, len(av.Slots))}
	for _, s := range av.Slots {
		out.Slots = append(out.Slots, SlotAnswer{StartsAt: s.StartsAt.UTC(), EndsAt: s.EndsAt.UTC(), LocalStart: s.LocalStart})
	}
	return out
}

// ResourceAnswer is PUT /v1/resources/{id}'s answer: the resource as
// stored.
type ResourceAnswer struct {
	ID string `json:"id"`
	ResourceBody
}

// present gives a receipt its wire shape (onWire) and the spoken line in
// the language the request asks for (?language=, else the API's).
func (s *Server) present(req *http.Request, r receipt.Receipt) receipt.Receipt {
	r = onWire(r)
	lang, err := s.language(req.URL.Query().Get("language"))
	if err != nil {
		lang = s.cfg.Language
	}
	r.Spoken = s.say(req.Context(), lang, r)
	s.notePending(req.Context(), r)
	return r
}

// onWire is a receipt in its wire shape, on every route that returns one
// (HTTP, MCP): local_start in the form requests use (YYYY-MM-DDTHH:MM,
// the property's wall time), alternatives likewise, instants in UTC, the
// reference always.
func onWire(r receipt.Receipt) receipt.Receipt {
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
	if r.StartsAt != nil && r.TimeZone != "" {
		r.LocalStart = r.StartsAt.In(loc).Format(localtime.Layout)
	}
	alts := make([]receipt.Slot, len(r.Alternatives))
	for i, a := range r.Alternatives {
		alts[i] = receipt.Slot{StartsAt: a.StartsAt.UTC(), EndsAt: a.EndsAt.UTC(), LocalStart: a.StartsAt.In(loc).Format(localtime.Layout)}
	}
	if len(alts) > 0 {
		r.Alternatives = alts
	}
	if r.Reference == "" && r.RequestKey != "" {
		r.Reference = receipt.Reference(r.RequestKey)
	}
	return r
}
