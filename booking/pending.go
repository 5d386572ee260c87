package booking

import (
	"fmt"
	"time"
)

// PendingOp names a booking call that can be answered
// pending_reconciliation.
type PendingOp string

// The booking calls reconciliation may send again.
const (
	PendingCommit     PendingOp = "commit"
	PendingHold       PendingOp = "hold"
	PendingReschedule PendingOp = "reschedule"
	PendingCancel     PendingOp = "cancel"
)

// PendingCall is a booking call the API answered pending_reconciliation,
// kept as it was sent: when Temporal died with the call in flight, it may
// never have got it, and then nothing but this record could ever decide
// what the caller was told would be decided. Reconciliation sends it
// again with the same key once the store and Temporal both say it is
// absent; its contact stays sealed under the key's data key.
type PendingCall struct {
	Op PendingOp `json:"op"`
	// RequestKey is the key answered: a reschedule's new key.
	RequestKey string `json:"request_key"`
	// Replaces is a reschedule's old key.
	Replaces string `json:"replaces,omitempty"`
	// Request is what a commit, a hold or a reschedule sent.
	Request    *CommitRequest `json:"request,omitempty"`
	AnsweredAt time.Time      `json:"answered_at"`
}

// Validate checks what the store will keep and reconciliation send.
func (c PendingCall) Validate() error {
	if err := ValidateKey(c.RequestKey); err != nil {
		return fmt.Errorf("pending call: %w", err)
	}
	switch c.Op {
	case PendingCommit, PendingHold:
	case PendingReschedule:
		if err := ValidateKey(c.Replaces); err != nil {
			return fmt.Errorf("pending reschedule: the key it replaces: %w", err)
		}
	case PendingCancel:
		return nil
	default:
		return fmt.Errorf("pending call %s: unknown op %q", c.RequestKey, c.Op)
	}
	if c.Request == nil {
		return fmt.Errorf("pending %s %s: the request is missing", c.Op, c.RequestKey)
	}
	return nil
}
