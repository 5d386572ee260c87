package booking

import "time"

// Attention is what an operator should look at now.
type Attention struct {
	// Sagas are running bookings that are pending, or confirmed but not
	// yet mirrored to the calendar or CRM.
	Sagas []SagaSummary
	// Flags are drift a reconciliation run could not repair by itself.
	Flags []Flag
	// OutsideRules are confirmed bookings that their resources' hours or
	// time off, changed since, no longer allow: they stand until someone
	// moves or cancels them.
	OutsideRules []OutsideRules
	// Handoffs are callers waiting for a person to call them back.
	Handoffs []Handoff
	// ReconcileFailures are the reconciliation steps whose last run
	// failed (a mirror's revoked token, say): the other steps ran, and
	// each is tried again by the next run.
	ReconcileFailures []StepFailure
}

// StepFailure is a reconciliation step that failed, since when, and its
// last error (which names no caller: errors never carry contacts).
type StepFailure struct {
	Step  string    `json:"step"`
	Error string    `json:"error"`
	Since time.Time `json:"since"`
	Last  time.Time `json:"last"`
}

// SagaSummary is one saga as the search attributes show it.
type SagaSummary struct {
	RequestKey     string
	Status         string
	Property       string
	CalendarSynced bool
	CRMSynced      bool
	// CallerNotified is whether the last message to the caller went out;
	// nil while none has ended, or when the caller agreed to none.
	CallerNotified *bool
}
