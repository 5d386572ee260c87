package api

import (
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/speech"
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

// AvailabilityOf is av in its wire shape.
func AvailabilityOf(av booking.Availability) AvailabilityAnswer {
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

// present gives a receipt its wire shape and the spoken line in the
// language the request asks for (?language=, else the API's). It reads
// and writes nothing.
func (s *Server) present(req *http.Request, r receipt.Receipt) receipt.Receipt {
	r = receipt.OnWire(r)
	lang, err := Language(req.URL.Query().Get("language"), s.cfg.Language)
	if err != nil {
		lang = s.cfg.Language
	}
	r.Spoken = s.cfg.Names.Speaker(lang, r.PropertyRef, r.AgentRef).Receipt(r)
	return r
}

// Language is a call's language tag, or def when it names none.
func Language(tag string, def speech.Lang) (speech.Lang, error) {
	if tag == "" {
		return def, nil
	}
	return speech.ParseLang(tag)
}
