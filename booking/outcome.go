package booking

import (
	"time"
	"unicode/utf8"
)

// Outcome is how a viewing went, as the agency's staff record it.
type Outcome string

// Outcomes.
const (
	OutcomeAttended Outcome = "attended"
	OutcomeNoShow   Outcome = "no_show"
	// OutcomeCancelledByAgency: the agency called the viewing off (its
	// agent could not come, the property was let): on a booking the
	// agency cancelled, or one whose start has passed without it.
	OutcomeCancelledByAgency Outcome = "cancelled_by_agency"
)

// Outcomes are every outcome, in the order the docs list them.
var Outcomes = []Outcome{OutcomeAttended, OutcomeNoShow, OutcomeCancelledByAgency}

// MaxOutcomeNote bounds an outcome's note, in characters.
const MaxOutcomeNote = 500

// OutcomeInput records how the viewing of RequestKey went. Note is staff's
// own words: it goes to the event log and the webhooks, so it names no
// one (the store keeps no personal data outside the vault).
type OutcomeInput struct {
	RequestKey string
	Outcome    Outcome
	Note       string
}

// Validate checks the input's shape; the store checks the booking's state.
func (in OutcomeInput) Validate() error {
	if err := ValidateKey(in.RequestKey); err != nil {
		return err
	}
	switch in.Outcome {
	case OutcomeAttended, OutcomeNoShow, OutcomeCancelledByAgency:
	case "":
		return Rejectf(CodeMissingField, "outcome is required: attended, no_show or cancelled_by_agency")
	default:
		return Rejectf(CodeInvalidOutcome, "outcome %q is none of attended, no_show, cancelled_by_agency", in.Outcome)
	}
	if n := utf8.RuneCountInString(in.Note); n > MaxOutcomeNote {
		return Rejectf(CodeInvalidOutcome, "the note is %d characters, over %d", n, MaxOutcomeNote)
	}
	return nil
}

// Allowed says whether b can take outcome o at now: attended and no_show
// once a confirmed viewing has started; cancelled_by_agency then too, or
// on a booking cancelled. A held, expired or moved booking takes none (a
// moved one's outcome goes on the booking that replaced it).
func (o Outcome) Allowed(b Booking, now time.Time) error {
	started := !now.Before(b.Intent.StartsAt)
	switch {
	case b.Status == StatusConfirmed && started:
		return nil
	case b.Status == StatusConfirmed && o == OutcomeCancelledByAgency:
		return Rejectf(CodeOutcomeNotAllowed, "the viewing of %s is still to come: cancel it first (the caller is told), then record cancelled_by_agency", b.RequestKey)
	case b.Status == StatusConfirmed:
		return Rejectf(CodeOutcomeNotAllowed, "the viewing of %s starts at %s: %s can be recorded once it has started",
			b.RequestKey, b.Intent.StartsAt.Format(time.RFC3339), o)
	case b.Status == StatusCancelled && o == OutcomeCancelledByAgency:
		return nil
	case b.Status == StatusReleasedForReschedule:
		return Rejectf(CodeOutcomeNotAllowed, "%s was moved to %s: record the outcome there", b.RequestKey, b.ReplacedByRequestKey)
	}
	return Rejectf(CodeOutcomeNotAllowed, "%s is %s: it takes no %s", b.RequestKey, b.Status, o)
}

// OutcomeOutput is the booking with its outcome recorded. Changed is false
// when it already had that outcome (a resend); Reminded says whether its
// caller was sent a reminder.
type OutcomeOutput struct {
	Booking  Booking `json:"booking"`
	Changed  bool    `json:"changed"`
	Reminded bool    `json:"reminded"`
	// Refused is the store's refusal, when it took no outcome.
	Refused *Rejection `json:"refused,omitempty"`
}
