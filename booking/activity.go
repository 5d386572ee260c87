package booking

import (
	"time"

	"github.com/google/uuid"
)

// The activity contract: what the saga's workflows send to its activities
// and get back, the names it calls them by, and the error types that carry
// business outcomes. Workflows and clients need these without linking the
// activities themselves (PostgreSQL, Google's API).

// Activity names. The worker registers the activities by their method
// names; a test in package activities checks that each name here is one.
const (
	ActivityCommit            = "Commit"
	ActivityConfirm           = "Confirm"
	ActivityLookup            = "Lookup"
	ActivityLapse             = "Lapse"
	ActivityExpireHold        = "ExpireHold"
	ActivityRelease           = "Release"
	ActivityWithdraw          = "Withdraw"
	ActivitySyncCalendar      = "SyncCalendar"
	ActivitySyncCRM           = "SyncCRM"
	ActivityReconcileStuck    = "ReconcileStuck"
	ActivityReconcileCalendar = "ReconcileCalendar"
	ActivityReconcileCRM      = "ReconcileCRM"
	ActivityExpireStaleHolds  = "ExpireStaleHolds"
	ActivityPurgeContacts     = "PurgeContacts"
	ActivityApplyRetention    = "ApplyRetention"
	ActivityFollowZoneRules   = "FollowZoneRules"
	ActivityDeliverWebhooks   = "DeliverWebhooks"
	ActivitySendMessages      = "SendMessages"
	ActivityQueueReminder     = "QueueReminder"
	ActivityRecordOutcome     = "RecordOutcome"
	ActivityNoteReconcile     = "NoteReconcile"
	ActivityAgencies          = "Agencies"
)

// Non-retryable ApplicationError types. They are business outcomes or
// refusals that running the activity again cannot change.
const (
	// ErrTypeConflict: a resource is full; details hold a ConflictDetail.
	ErrTypeConflict = "BookingConflict"
	// ErrTypeRejected: the request was refused; details hold a Rejection.
	ErrTypeRejected = "BookingRejected"
	// ErrTypeMirrorRefused: the calendar or CRM refused in a way retries
	// cannot fix (a foreign event under our id, a 4xx). An operator looks.
	ErrTypeMirrorRefused = "MirrorRefused"
)

// ConflictDetail is carried by an ErrTypeConflict error.
type ConflictDetail struct {
	Busy []Busy `json:"busy"`
	// Source is "store", or "calendar" for an event written straight into
	// a resource's calendar.
	Source string `json:"source"`
}

// CommitInput is the commit activity's argument: the request, and which try
// of it this is.
type CommitInput struct {
	CommitRequest
	// Attempt counts the saga's tries of this commit, from 1. After the
	// first, the store's own record of the key is read before anything
	// else: an earlier try may have decided.
	Attempt int
}

// CommitOutput is a booking the store holds for the key.
type CommitOutput struct {
	Booking  Booking
	Replayed bool
}

// KeyInput names one booking by its request key.
type KeyInput struct {
	RequestKey string
}

// ConfirmInput confirms a key's hold. Contact is the one the caller gave
// with the book that confirms it (sealed), if any: it replaces the hold's.
type ConfirmInput struct {
	RequestKey string
	Contact    *Contact `json:",omitempty"`
}

// LookupOutput is the store's authoritative answer about a key: nothing
// (Found false), a booking, or a refusal (Found, with Refusal set).
type LookupOutput struct {
	Found   bool
	Booking Booking
	Refusal *Refusal
	// PendingKey, when nothing is found, is the key a call was answered
	// pending_reconciliation on and is not settled yet (the key a
	// reference names): the store may still decide it, so it is pending,
	// never "not found".
	PendingKey string `json:",omitempty"`
}

// Booked reports a booking under the key, in any status.
func (o LookupOutput) Booked() bool { return o.Found && o.Refusal == nil }

// LapseInput records an intent that expired before anyone committed it.
type LapseInput struct {
	RequestKey    string
	Intent        Intent
	PolicyVersion string
}

// DecisionInput names a key, or the reference a caller quotes for it.
type DecisionInput struct {
	RequestKey string
	Reference  string
}

// ReleaseInput cancels a
type ReleaseInput struct {
	RequestKey string
	// Booking is the booking the saga holds. A store that lost it (restored
	// from an older backup) has nothing to release: it records it
	// cancelled, as the caller asked, rather than the saga answer
	// "confirmed" for a booking the store does not hold.
	Booking *Booking `json:",omitempty"`
}

// SyncOutput is where a booking was mirrored.
type SyncOutput struct {
	// Skipped is set when there is nothing to write: no such mirror is
	// configured, no resource has a calendar, or the booking is a hold.
	Skipped bool
	EventID string
	CRMRef  string
}

// Timeline is one booking as every system sees it, side by side.
type Timeline struct {
	Booking  *Booking
	Events   []Event
	Calendar []CalendarState
	CRM      *CRMState
	// Messages are what the caller was sent, or why not.
	Messages []MessageRecord
	// Errors are the systems that could not be read.
	Errors []string
}

// CRMState is the booking's viewing record as the CRM holds it.
type CRMState struct {
	ID       string
	Status   string
	StartsAt time.Time
}

// CalendarState is the booking's event in one calendar.
type CalendarState struct {
	Provider   string
	CalendarID string
	Status     string // "none" when there is no event
	Start, End time.Time
}

// WindowInput is one page of a reconciliation window.
type WindowInput struct {
	From, To time.Time
	After    Cursor
	Limit    int
}

// CalendarReport counts what one page found and did in the calendars.
type CalendarReport struct {
	Missing, Moved, Orphans, Flagged, AlreadyFlagged int
	// Unknown counts, among Flagged, events of ours whose key the store
	// does not know: kept, and flagged for a human.
	Unknown int
	// Failed counts items a mirror refused for good (a 4xx, an event under
	// our id that is not ours); the run goes on without them.
	Failed  int
	Details []string
	// Next is set when the page was full and more bookings follow.
	Next *Cursor
}

// CRMReport counts what one page repaired in the CRM.
type CRMReport struct {
	Missing, Mismatched, Failed int
	Details                     []string
	Next                        *Cursor
}

// StuckInput asks for sagas whose outcome has been unknown since before
// Before.
type StuckInput struct {
	Before time.Time
	// TaskQueue keeps a run to its own workers' sagas.
	TaskQueue string
	Limit     int
}

// StuckReport counts the stuck sagas found and what the store said, and
// the open sagas whose answer the store contradicted.
type StuckReport struct {
	Found, Absent int
	// Drifted counts open sagas told the store's answer because they
	// published another.
	Drifted int
	// Lost counts open sagas newly flagged because they answered a live
	// booking the store has no record of; LostChanges, sagas that answered
	// cancelled or rescheduled for a booking the store holds live;
	// ReleasesRecorded, sagas whose booking and its release the store had
	// both lost, recorded again as released.
	Lost, LostChanges, ReleasesRecorded int
	// Resent counts calls answered pending that Temporal never got, sent
	// again with their keys and decided.
	Resent int
	// MessagesQueued counts live bookings with a contact and no message
	// queued, queued now; MessagesOverdue, messages due for longer than
	// the run's window, whose sender was started if it was not running.
	MessagesQueued, MessagesOverdue int
	Details                         []string
}

// StuckProgress is how far a ReconcileStuck attempt got, heartbeated
// after every page: the next attempt (after a timeout on a large
// deployment, or a worker lost mid-run) goes on from there with what was
// found so far, so each attempt moves the run on rather than starting
// again from the first page.
type StuckProgress struct {
	// Phase is the pass under way: StuckPhaseStuck, StuckPhaseOpen,
	// StuckPhaseReleased or StuckPhasePending; Token its next page (nil:
	// its first).
	Phase  int
	Token  []byte
	Report StuckReport
}

// ReconcileStuck's passes, in order.
const (
	StuckPhaseStuck = iota
	StuckPhaseOpen
	StuckPhaseReleased
	StuckPhasePending
	StuckPhaseMessages
)

// MessagesInput bounds one run of the caller messages' sender: with none
// due, it waits up to Wait for one.
type MessagesInput struct {
	Wait time.Duration
}

// ReminderInput names the booking whose caller is to be reminded now.
type ReminderInput struct {
	RequestKey string
	BookingID  uuid.UUID
}

// ReminderOutput says whether a reminder is queued for the booking: false
// when the store no longer holds it confirmed, or no reminder is due.
type ReminderOutput struct {
	Queued bool
}

// WebhookInput names an endpoint, and how long a delivery run waits for
// an event before it returns with none.
type WebhookInput struct {
	EndpointID string
	Wait       time.Duration
}

// ErrTypeWebhookGone marks an endpoint that was removed: its dispatcher ends.
const ErrTypeWebhookGone = "webhook_gone"

// LimitInput bounds a batch.
type LimitInput struct {
	Limit int
}

// CountOutput is how many rows a batch changed.
type CountOutput struct {
	Count int
}

// ReconcileSteps are the steps of a reconciliation run, in order; each
// stands on its own.
var ReconcileSteps = []string{ActivityAgencies, ActivityReconcileStuck, ActivityExpireStaleHolds, ActivityPurgeContacts, ActivityApplyRetention,
	ActivityFollowZoneRules, ActivityReconcileCalendar, ActivityReconcileCRM}

// StepOutcome is how one reconciliation step ended in a run: Error is
// empty when it got through.
type StepOutcome struct {
	Step  string
	Error string `json:",omitempty"`
}

// NoteReconcileInput is every step a run ran, as it ended.
type NoteReconcileInput struct {
	Steps []StepOutcome
}
