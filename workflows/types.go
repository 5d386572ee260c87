package workflows

import (
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// State is where a booking saga stands.
type State string

// Saga states. COMMITTING and UNKNOWN answer pending_reconciliation.
const (
	StateOffered     State = "OFFERED"
	StateSelected    State = "SELECTED"
	StateCommitting  State = "COMMITTING"
	StateUnknown     State = "UNKNOWN"
	StateConfirmed   State = "CONFIRMED"
	StateConflict    State = "CONFLICT"
	StateRejected    State = "REJECTED"
	StateCancelled   State = "CANCELLED"
	StateExpired     State = "EXPIRED"
	StateRescheduled State = "RESCHEDULED"
)

// decided reports whether the commit's outcome is known.
func (s State) decided() bool {
	return s != StateOffered && s != StateSelected && s != StateCommitting && s != StateUnknown
}

// BookingInput starts a booking saga.
type BookingInput struct {
	RequestKey string
	// Commit, when set, is committed at once: a reschedule starts the new
	// booking this way. Otherwise a select or commit update brings it.
	Commit *booking.CommitRequest
	Settings
	// Carry is the state handed over by continue-as-new.
	Carry *BookingState
}

// Settings are the saga's timings; zero values take the defaults.
type Settings struct {
	// CommitWait bounds how long a commit update waits for the outcome
	// before answering pending_reconciliation (a voice call can't wait).
	CommitWait time.Duration
	// IntentTTL is how long an uncommitted intent stays open.
	IntentTTL time.Duration
	// MirrorFirstTry bounds the first calendar and CRM writes, which run
	// while the workflow task is held (updates and queries wait for them);
	// the decision reaches the search attributes with their outcome, so it
	// bounds that wait too.
	MirrorFirstTry time.Duration
	// MirrorAttemptTimeout bounds one retry of a calendar or CRM write; a
	// worker that dies mid-write is noticed after this long and the write
	// moves on.
	MirrorAttemptTimeout time.Duration
}

// WithDefaults fills in the zero values.
func (s Settings) WithDefaults() Settings {
	if s.CommitWait <= 0 {
		s.CommitWait = 3 * time.Second
	}
	if s.IntentTTL <= 0 {
		s.IntentTTL = 30 * time.Minute
	}
	if s.MirrorAttemptTimeout <= 0 {
		s.MirrorAttemptTimeout = time.Minute
	}
	if s.MirrorFirstTry <= 0 {
		s.MirrorFirstTry = 2 * time.Second
	}
	return s
}

// CancelRequest is the argument of the cancel update.
type CancelRequest struct {
	Reason string
}

// RescheduleRequest moves a confirmed booking to a new intent, under a new
// request key of its own.
type RescheduleRequest struct {
	NewRequestKey string
	Commit        booking.CommitRequest
}

// BookingState is the saga's state, returned by the state query and carried
// across continue-as-new.
type BookingState struct {
	RequestKey string
	State      State
	Request    *booking.CommitRequest
	// OpenedAt is when the saga began, across continue-as-new: an
	// uncommitted intent lapses IntentTTL after it.
	OpenedAt       time.Time
	Booking        *booking.Booking
	Reason         *receipt.Reason
	CommitAttempts int
	UnknownSince   *time.Time
	// Held is set while a hold placed by select is live.
	Held bool
	// CancelRequested is set when a cancel came while the outcome was not
	// known; it is carried out once the booking is confirmed.
	CancelRequested bool
	ReplacedBy      string
	// ReplacedNotified is set once the booking this one replaces was told
	// the outcome.
	ReplacedNotified bool
	// Replacements are the new bookings reschedules started, by request
	// key: nil while undecided, then the receipt their first send was
	// answered with once decided, which every resend gets too.
	Replacements   map[string]*receipt.Receipt
	CalendarSynced bool
	CRMSynced      bool
	// Reminded is set once the reminder's time came and the store was
	// asked to queue it (changeCallerMessages).
	Reminded bool
	// Messaged is how the last message to the caller ended ("" before
	// any did): BookingCallerNotified is true for sent, false for
	// undeliverable.
	Messaged booking.MessageStatus `json:",omitempty"`
	// LastError is the last mirror failure, for an operator.
	LastError string
}
