package activities

import (
	"github.com/uber-go/tally/v4"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
)

// The series the activities export, made at start with zero values so
// that dashboards and alerts see every one before the first booking.
var (
	commitOutcomes = []string{"confirmed", "held", "replayed", "conflict", "rejected", "error"}
	driftKinds     = [][2]string{{"booking_retention", "retired"}, {"calendar_foreign", "flagged"}, {"calendar_missing", "repaired"},
		{"calendar_unknown", "flagged"}, {"store_lost_booking", "flagged"}, {"store_lost_change", "flagged"},
		{"store_lost_release", "recorded"},
		{"calendar_moved", "repaired"}, {"calendar_orphan", "repaired"}, {"contact_retention", "purged"}, {"crm_contact_erased", "forgotten"}, {"crm_mismatch", "repaired"},
		{"crm_missing", "repaired"}, {"expired_hold", "repaired"}, {"saga_answer", "told"}, {"stuck_commit", "repaired"},
		{"zone_rules_changed", "repaired"}, {"zone_rules_changed", "flagged"}, {"pending_call", "resent"},
		{"caller_message", "queued"}, {"caller_message", "overdue"}}
)

// RegisterMetrics creates every series the activities export into m (the
// scope given as Activities.Metrics), at zero: the counters' for the
// default agency, whose label names another agency's series once it
// counts. It is a function, not a method: every exported method of
// Activities is an activity.
func RegisterMetrics(root tally.Scope) {
	m := root.Tagged(map[string]string{"agency": agency.Default.Label()})
	for _, o := range commitOutcomes {
		m.Tagged(map[string]string{"outcome": o}).Counter("commits_total").Inc(0)
	}
	root.Timer("commit_latency")
	for _, why := range []yielded{yieldIdle, yieldBudget, yieldStopped} {
		root.Tagged(map[string]string{"ended": string(why)}).Timer("mirror_yield")
	}
	m.Counter("calendar_unchecked_total").Inc(0)
	for _, step := range booking.ReconcileSteps {
		m.Tagged(map[string]string{"step": step}).Counter("reconcile_step_failures_total").Inc(0)
	}
	for _, d := range driftKinds {
		m.Tagged(map[string]string{"category": d[0], "action": d[1]}).Counter("drift_total").Inc(0)
	}
	for _, r := range []string{"delivered", "failed"} {
		m.Tagged(map[string]string{"result": r}).Counter("webhook_deliveries_total").Inc(0)
	}
	for _, r := range []booking.MessageStatus{booking.MessageSent, booking.MessageNotConsented, booking.MessageUndeliverable, booking.MessageStale,
		booking.MessageRefused, "failed"} {
		m.Tagged(map[string]string{"result": string(r)}).Counter("caller_messages_total").Inc(0)
	}
	for _, why := range []string{"cap", "country", "stopped"} {
		m.Tagged(map[string]string{"reason": why}).Counter("texts_refused_total").Inc(0)
	}
	// Outcomes are by property and agent too: their zeros name none, with
	// the same label names, as Prometheus wants of one metric's series.
	for _, o := range booking.Outcomes {
		for _, reminded := range []string{"false", "true"} {
			for _, reconfirmed := range []string{"false", "true"} {
				m.Tagged(map[string]string{"outcome": string(o), "property": "", "agent": "", "reminded": reminded,
					"reconfirmed": reconfirmed}).Counter("viewing_outcomes_total").Inc(0)
			}
		}
	}
}
